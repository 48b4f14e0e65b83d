import Foundation
import Synchronization
import Testing
@testable import MessagePack

/// The coders run `Codable` once per distinct small plain value and thread (`PlainValueMemo`).
///
/// Each test uses types of its own, so that what other tests (on the same threads) remembered
/// cannot change its counts, and a test body that never suspends runs on one thread throughout.
@Suite struct PlainValueMemoTests {
    @Test func aPlainValueIsDecodedOncePerDistinctInput() throws {
        typealias Probe = Counted<DecodeTag, Level>
        let decoder = MessagePackDecoder()
        let high = try MessagePackEncoder(remembersPlainValues: false).encode(Probe(.high(7)))
        let low = try MessagePackEncoder(remembersPlainValues: false).encode(Probe(.low))
        #expect(hex(high) == "81a46869676881a25f3007")
        let start = Probe.calls
        for _ in 0 ..< 3 { #expect(try decoder.decode(Probe.self, from: high).value == .high(7)) }
        #expect(Probe.calls - start == 1)
        for _ in 0 ..< 3 { #expect(try decoder.decode(Probe.self, from: low).value == .low) }
        #expect(Probe.calls - start == 2)
        // Every path to the decoder shares the memo: Data and a raw buffer are the same bytes.
        #expect(try decoder.decode(Probe.self, from: Data(high)).value == .high(7))
        #expect(try high.withUnsafeBytes { try decoder.decode(Probe.self, from: $0) }.value == .high(7))
        #expect(Probe.calls - start == 2)

        // Turned off, or with userInfo, each decode runs `init(from:)`.
        let off = MessagePackDecoder(remembersPlainValues: false)
        let withInfo = MessagePackDecoder(userInfo: [try #require(CodingUserInfoKey(rawValue: "k")): 1])
        for _ in 0 ..< 3 { #expect(try off.decode(Probe.self, from: high).value == .high(7)) }
        for _ in 0 ..< 2 { #expect(try withInfo.decode(Probe.self, from: high).value == .high(7)) }
        #expect(Probe.calls - start == 7)
    }

    @Test func valuesThatAreNotSmallPlainBytesAreDecodedEachTime() throws {
        typealias Named = Counted<DecodeTag, String>
        typealias Wide = Counted<DecodeTag, Wide24>
        typealias LongInput = Counted<DecodeTag, Pair>
        let named = try MessagePackEncoder().encode(Named("plain"))
        let wide = try MessagePackEncoder().encode(Wide(Wide24(a: 1, b: 2, c: 3)))
        let long = try MessagePackEncoder().encode(LongInput(Pair(first: .max, second: .min)))
        #expect(long.count > PlainValueMemo.maxInputBytes)
        let (named0, wide0, long0) = (Named.calls, Wide.calls, LongInput.calls)
        for _ in 0 ..< 3 {
            #expect(try MessagePackDecoder().decode(Named.self, from: named).value == "plain")
            #expect(try MessagePackDecoder().decode(Wide.self, from: wide).value == Wide24(a: 1, b: 2, c: 3))
            #expect(try MessagePackDecoder().decode(LongInput.self, from: long).value == Pair(first: .max, second: .min))
        }
        #expect(Named.calls - named0 == 3)
        #expect(Wide.calls - wide0 == 3)
        #expect(LongInput.calls - long0 == 3)
    }

    @Test func aValueAlignedWiderThanAWordIsCodedEachTime() throws {
        // 16 bytes, plain, but 16-byte aligned: the memo's bits could not be loaded as one in place.
        typealias Aligned = Counted<AlignTag, SIMD2<Double>>
        #expect(MemoryLayout<Aligned>.size == 16 && MemoryLayout<Aligned>.alignment == 16 && _isPOD(Aligned.self))
        let input = try MessagePackEncoder().encode(Aligned(SIMD2(1.5, -2.25)))
        #expect(input.count <= PlainValueMemo.maxInputBytes)
        let (decodes, encodes) = (Aligned.calls, Aligned.encodes)
        for _ in 0 ..< 3 {
            #expect(try MessagePackDecoder().decode(Aligned.self, from: input).value == SIMD2(1.5, -2.25))
            #expect(try MessagePackEncoder().encode(Aligned(SIMD2(1.5, -2.25))) == input)
        }
        #expect(Aligned.calls - decodes == 3)
        #expect(Aligned.encodes - encodes == 3)
    }

    @Test func aTypeCodedEachTimeRunsItsCodableOnEveryCall() throws {
        let input = try MessagePackEncoder().encode(Stamped(.high(1)))
        let (decodes, encodes) = (Stamped.calls, Stamped.encodes)
        for _ in 0 ..< 3 {
            #expect(try MessagePackDecoder().decode(Stamped.self, from: input).value == .high(1))
            #expect(try MessagePackEncoder().encode(Stamped(.high(1))) == input)
        }
        #expect(Stamped.calls - decodes == 3)
        #expect(Stamped.encodes - encodes == 3)
    }

    @Test func theSameBytesDecodeAsEachTypeOnItsOwn() throws {
        let bytes = try MessagePackEncoder().encode(Left.same)
        #expect(bytes == (try MessagePackEncoder().encode(Right.same)))
        for _ in 0 ..< 2 {
            #expect(try MessagePackDecoder().decode(Left.self, from: bytes) == .same)
            #expect(try MessagePackDecoder().decode(Right.self, from: bytes) == .same)
            // A type that reads the same map otherwise: an Int8 is not this map, and says so.
            #expect(throws: DecodingError.self) { try MessagePackDecoder().decode(Int8.self, from: bytes) }
        }
    }

    @Test func aFailedDecodeIsNotRemembered() throws {
        typealias Probe = Counted<FailTag, Level>
        let unknownCase: [UInt8] = [0x81, 0xA4, 0x6D, 0x69, 0x64, 0x64, 0x80] // {"midd": {}}
        let start = Probe.calls
        for _ in 0 ..< 3 {
            #expect(throws: DecodingError.self) { try MessagePackDecoder().decode(Probe.self, from: unknownCase) }
        }
        #expect(Probe.calls - start == 3)
    }

    @Test func aPlainValueIsEncodedOncePerKeyOrder() throws {
        typealias Probe = Counted<EncodeTag, Level>
        let expected = try MessagePackEncoder(remembersPlainValues: false).encode(Probe(.high(-2)))
        let start = Probe.encodes
        for _ in 0 ..< 3 { #expect(try MessagePackEncoder().encode(Probe(.high(-2))) == expected) }
        #expect(Probe.encodes - start == 1)
        // Unsorted keys are another encoding, remembered apart (a plain value's keys are its own).
        for _ in 0 ..< 2 { #expect(try MessagePackEncoder(sortKeys: false).encode(Probe(.high(-2))) == expected) }
        #expect(Probe.encodes - start == 2)
        #expect(try MessagePackEncoder().encode(Probe(.low)) != expected)
        #expect(Probe.encodes - start == 3)
        // Off, with userInfo, or into a writer: `encode(to:)` each time.
        for _ in 0 ..< 2 { _ = try MessagePackEncoder(remembersPlainValues: false).encode(Probe(.high(-2))) }
        _ = try MessagePackEncoder(userInfo: [try #require(CodingUserInfoKey(rawValue: "k")): 1]).encode(Probe(.high(-2)))
        let writer = MessagePackWriter()
        try MessagePackEncoder().encode(Probe(.high(-2)), into: writer)
        #expect(writer.bytes == expected)
        #expect(Probe.encodes - start == 7)
    }

    @Test func aFullTableStartsAgainAndStillDecodesEveryValue() throws {
        typealias Probe = Counted<BoundTag, Int16>
        let encoder = MessagePackEncoder(remembersPlainValues: false)
        let inputs = try (0 ..< PlainValueMemo.limit + 10).map { try encoder.encode(Probe(Int16($0))) }
        let start = Probe.calls
        for (index, input) in inputs.enumerated() {
            #expect(try MessagePackDecoder().decode(Probe.self, from: input).value == Int16(index))
        }
        #expect(Probe.calls - start == PlainValueMemo.limit + 10)
        // The table was emptied when full: the first value is decoded again, the last is kept.
        #expect(try MessagePackDecoder().decode(Probe.self, from: inputs[0]).value == 0)
        #expect(try MessagePackDecoder().decode(Probe.self, from: inputs[inputs.count - 1]).value == Int16(inputs.count - 1))
        #expect(Probe.calls - start == PlainValueMemo.limit + 11)
    }

    @Test func valuesCodedInTurnBeyondTheRecentSlotsEachKeepTheirOwn() throws {
        typealias Probe = Counted<RotateTag, Level>
        // More values than the recent entries hold, in turn: each lookup evicts another.
        let values: [Level] = [.low] + (1 ... 6).map { .high(Int8($0)) }
        let inputs = try values.map { try MessagePackEncoder(remembersPlainValues: false).encode(Probe($0)) }
        let (decoder, encoder) = (MessagePackDecoder(), MessagePackEncoder())
        let (decodes, encodes) = (Probe.calls, Probe.encodes)
        for _ in 0 ..< 5 {
            for (value, input) in zip(values, inputs) {
                #expect(try decoder.decode(Probe.self, from: input).value == value)
                #expect(try encoder.encode(Probe(value)) == input)
            }
        }
        #expect(Probe.calls - decodes == values.count)
        #expect(Probe.encodes - encodes == values.count)
    }

    @Test func eachThreadRemembersForItself() throws {
        typealias Probe = Counted<ThreadTag, Level>
        let input = try MessagePackEncoder(remembersPlainValues: false).encode(Probe(.high(3)))
        let wrong = Mutex(0)
        let start = Probe.calls
        let finished = DispatchSemaphore(value: 0)
        for _ in 0 ..< 8 {
            Thread {
                for _ in 0 ..< 500 where (try? MessagePackDecoder().decode(Probe.self, from: input))?.value != .high(3) {
                    wrong.withLock { $0 += 1 }
                }
                finished.signal()
            }.start()
        }
        let ended = (0 ..< 8).filter { _ in finished.wait(timeout: .now() + 30) == .success }.count
        #expect(ended == 8)
        #expect(wrong.withLock { $0 } == 0)
        #expect(Probe.calls - start == 8)
    }
}

// MARK: Probes

/// A small plain enum, as app actions and mutations often are.
private enum Level: Codable, Equatable {
    case low
    case high(Int8)
}

private struct Wide24: Codable, Equatable {
    var a: Int64, b: Int64, c: Int64
}

/// Plain and 16 bytes, but with names long enough that its encoding passes 32 bytes.
private struct Pair: Codable, Equatable {
    var first: Int64
    var second: Int64

    enum CodingKeys: String, CodingKey {
        case first = "the first of the pair", second = "the second of the pair"
    }
}

private enum Left: Codable, Equatable { case same }
private enum Right: Codable, Equatable { case other, same }

/// Tags that give each test its own `Counted` type, hence its own counts and memo entries.
private enum DecodeTag {}
private enum FailTag {}
private enum AlignTag {}
private enum EncodeTag {}
private enum BoundTag {}
private enum ThreadTag {}
private enum StampTag {}
private enum RotateTag {}

/// Plain and small, but opted out of the memo.
private typealias Stamped = Counted<StampTag, Level>
extension Counted: CodedEachTime where Tag == StampTag {}

/// Wraps a value and counts the runs of its `Codable` conformance, per `Tag`.
private struct Counted<Tag, Value: Codable & Equatable>: Codable {
    var value: Value

    init(_ value: Value) { self.value = value }

    init(from decoder: any Decoder) throws {
        Counters.decodes.withLock { $0[ObjectIdentifier(Self.self), default: 0] += 1 }
        value = try Value(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        Counters.encodes.withLock { $0[ObjectIdentifier(Self.self), default: 0] += 1 }
        try value.encode(to: encoder)
    }

    static var calls: Int { Counters.decodes.withLock { $0[ObjectIdentifier(Self.self), default: 0] } }
    static var encodes: Int { Counters.encodes.withLock { $0[ObjectIdentifier(Self.self), default: 0] } }
}

private enum Counters {
    static let decodes = Mutex<[ObjectIdentifier: Int]>([:])
    static let encodes = Mutex<[ObjectIdentifier: Int]>([:])
}
