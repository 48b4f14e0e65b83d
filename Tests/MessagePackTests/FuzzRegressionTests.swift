import Foundation
import Testing
@testable import MessagePack

/// Inputs that fuzz-msgpack (Fuzz/, docs/FUZZING.md) found to break a check, fed again exactly
/// as found. Each reproducer is also in the seed corpus as `Fuzz/corpus/msgpack/regression-*`, so
/// every fuzz run replays it too.
@Suite struct FuzzRegressionTests {
    /// The input `c7 0c ff 000000fd 7fffffffffffff0f` (`regression-date-past-int64-seconds`), a
    /// timestamp96 of Int64.max - 240 seconds, decoded as a `Date` of 2^63 s (the seconds rounded
    /// to a Double), which the encoder refuses ("outside the msgpack timestamp range"): a value
    /// that decoded but did not encode again, so a state holding one could not be snapshotted.
    /// The decoder now refuses a timestamp past the last `Date` that encodes again.
    @Test func aTimestampPastTheLastDateThatEncodesAgainIsRefused() throws {
        let input: [UInt8] = [0xc7, 0x0c, 0xff, 0x00, 0x00, 0x00, 0xfd, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]
        do {
            _ = try MessagePackDecoder().decode(Date.self, from: input)
            Issue.record("decoded a Date that does not encode again")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("encodes again"))
        }
        // The largest seconds that stay below 2^63 as a Double, and the smallest there are, round trip.
        for seconds in [Int64(1) << 62, Int64.max - 1_024, Int64.min] {
            let date = try MessagePackDecoder().decode(Date.self, from: MessagePackValue.timestamp(seconds: seconds, nanoseconds: 0).pack())
            #expect(try MessagePackDecoder().decode(Date.self, from: MessagePackEncoder().encode(date)) == date, "\(seconds)")
        }
    }

    /// The fuzzer's input `2d 30` ("-0") read as JSON text became `.int(0)`, which packs as the
    /// unsigned 0 and unpacks as `.uint(0)`: a value that changed in pack/unpack. JSON `-0` is zero,
    /// not a negative number, and now parses as `.uint(0)` like every other non-negative integer.
    @Test func jsonMinusZeroIsUnsignedZero() throws {
        let input: [UInt8] = [0x2d, 0x30]
        let value = try MessagePackValue(jsonText: String(decoding: input, as: UTF8.self))
        #expect(value == .uint(0))
        #expect(try MessagePackValue(unpacking: value.pack()) == value)
        #expect(try MessagePackValue(jsonText: "[-0, -1, -9223372036854775808, -9223372036854775809]")
            == .array([.uint(0), .int(-1), .int(.min), .double(-9_223_372_036_854_775_809)]))
        // A fraction or exponent keeps the sign: -0.0 stays the double negative zero.
        guard case .double(let zero) = try MessagePackValue(jsonText: "-0.0") else {
            Issue.record("-0.0 is not a double")
            return
        }
        #expect(zero == 0 && zero.sign == .minus)
    }

    /// A CI run of fuzz-msgpack stopped on one input that ran past its 10 s. The shape that
    /// reproduces it: one-entry maps used as map keys, nested. Each key inside a key is quoted
    /// once more in JSON text, which doubles its backslashes, so 45 bytes (`81` x 22, `c0` x 23)
    /// printed 2^22 characters in 12 s under the fuzzer's sanitizers. A key whose own keys nest
    /// three levels deep is now named by the base64 of its MessagePack bytes.
    @Test func keysOfKeysNestedDeepAreNamedByTheirBytes() throws {
        func nested(_ depth: Int) -> [UInt8] { Array(repeating: 0x81, count: depth) + [0x01] + Array(repeating: 0xC0, count: depth) }
        // Up to a key whose keys nest twice, the key's JSON text, quoted once per level.
        #expect(try MessagePackValue(unpacking: nested(1)).jsonText() == #"{"1":null}"#)
        #expect(try MessagePackValue(unpacking: nested(2)).jsonText() == #"{"{\"1\":null}":null}"#)
        #expect(try MessagePackValue(unpacking: nested(3)).jsonText() == #"{"{\"{\\\"1\\\":null}\":null}":null}"#)
        // The next level: the key {{{1: nil}: nil}: nil} is named by its bytes.
        #expect(try MessagePackValue(unpacking: nested(4)).jsonText() == #"{"gYGBAcDAwA==":null}"#)
        #expect(Data(base64Encoded: "gYGBAcDAwA==").map { [UInt8]($0) } == nested(3))

        // The input of the hang's shape, 45 bytes: one short line.
        let input: [UInt8] = Array(repeating: 0x81, count: 22) + Array(repeating: 0xC0, count: 23)
        let value = try MessagePackValue(unpacking: input)
        guard case .map(let entries) = value, let key = entries.first?.key else {
            Issue.record("not a map: \(value)")
            return
        }
        let name = Data(key.pack()).base64EncodedString()
        #expect(key.pack() == Array(input.dropFirst().dropLast()))
        #expect(key.jsonKeyName() == name)
        #expect(value.jsonText() == "{\"\(name)\":null}")
        #expect(value.jsonText(sortedKeys: false) == value.jsonText())
        #expect(try MessagePackValue(jsonText: value.jsonText()) == .map([(key: .string(name), value: .nil)]))
        // A string key is its own name at any depth, and numbers and shallow containers their text.
        #expect(MessagePackValue.string("a\"b").jsonKeyName() == "a\"b")
        #expect(MessagePackValue.int(-3).jsonKeyName() == "-3")
        #expect(MessagePackValue.array([.uint(1), .string("x")]).jsonKeyName() == #"[1,"x"]"#)
    }

    /// LeakSanitizer under fuzz-msgpack, on `81 a5 "point" 82 a1 "x" 01 a1 "y" 02` decoded as an
    /// enum with associated values and encoded again: every nested container's node kept its
    /// parent alive (`parent` strong, the parent holding the child in `deferred`), so each encode
    /// of a value with a nested container leaked the whole node tree and its buffers.
    @Test func encoderNodesAreFreedAfterEncoding() throws {
        let input = bytes("81 a5 706f696e74 82 a1 78 01 a1 79 02")
        let shape = try decoded(LeakProbe.self, input)
        #expect(shape == .point(x: 1, y: 2))
        // A call with a session of its own (any `userInfo`) frees every node it made.
        let probe = EncoderProbe()
        _ = try MessagePackEncoder(userInfo: [freshSession: true]).encode(probe)
        #expect(probe.encoders.count == 3)
        #expect(probe.encoders.allSatisfy { $0.object == nil }, "encoder nodes outlived the encode call")
        // A session the thread keeps holds its nodes for the next call and reuses them: as many
        // stay alive after 50 calls as after one, none of them a leaked tree.
        let kept = EncoderProbe()
        _ = try MessagePackEncoder().encode(kept)
        let afterOne = kept.alive
        for _ in 0 ..< 49 { _ = try MessagePackEncoder().encode(kept) }
        #expect(kept.encoders.count == 150)
        #expect(afterOne.count <= 3)
        #expect(kept.alive == afterOne, "encoder nodes piled up across calls")
    }
}

/// The enum shape the fuzzer's input decodes as.
private enum LeakProbe: Codable, Equatable {
    case point(x: Int, y: Int)
}

/// Remembers, weakly, the encoder of the value and of a nested container and a super-encoder
/// (both deferred children of the value's node).
private final class EncoderProbe: Encodable {
    struct Weak { weak var object: AnyObject? }
    var encoders: [Weak] = []
    /// The encoders recorded that are still alive.
    var alive: Set<ObjectIdentifier> { Set(encoders.compactMap { $0.object.map(ObjectIdentifier.init) }) }

    enum Keys: String, CodingKey { case nested, base }

    func encode(to encoder: any Encoder) throws {
        encoders.append(Weak(object: encoder as AnyObject))
        var container = encoder.container(keyedBy: Keys.self)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .nested)
        try nested.encode(1, forKey: .base)
        let base = container.superEncoder(forKey: .base)
        encoders.append(Weak(object: base as AnyObject))
        var single = base.singleValueContainer()
        try single.encode("base")
        let superEncoder = container.superEncoder()
        encoders.append(Weak(object: superEncoder as AnyObject))
        try "super".encode(to: superEncoder)
    }
}
