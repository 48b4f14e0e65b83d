import Foundation
import Testing
@testable import MessagePack

struct Envelope: Codable, Equatable {
    var kind: String
    var payload: MessagePackValue
}

@Suite struct MessagePackValueTests {
    static let sample: MessagePackValue = .map([
        (.string("n"), .nil), (.string("b"), .bool(true)), (.string("i"), .int(-5)),
        (.string("u"), .uint(UInt64.max)), (.string("f"), .float(1.5)), (.string("d"), .double(0.1)),
        (.string("s"), .string("ü")), (.string("bin"), .binary([0, 255])),
        (.string("a"), .array([.uint(1), .array([])])), (.uint(7), .string("int key")),
        (.string("e"), .extension(type: 9, data: [1, 2])),
        (.string("t"), .timestamp(seconds: 1_700_000_000, nanoseconds: 5)),
    ])

    @Test func packAndUnpackRoundTrip() throws {
        let packed = Self.sample.pack()
        #expect(try MessagePackValue(unpacking: packed) == Self.sample)
        let zeroCopy = try packed.withUnsafeBytes { try MessagePackValue(unpacking: $0) }
        #expect(zeroCopy == Self.sample)
    }

    @Test func packedBytesAreExact() {
        #expect(hex(MessagePackValue.array([.int(-1), .uint(1), .string("a"), .nil]).pack()) == "94ff01a161c0")
        #expect(hex(MessagePackValue.timestamp(seconds: 1, nanoseconds: 0).pack()) == "d6ff00000001")
        #expect(hex(MessagePackValue.extension(type: 1, data: [7]).pack()) == "d40107")
        #expect(hex(MessagePackValue.map([(.string("b"), .uint(1)), (.string("a"), .uint(2))]).pack()) == "82a16201a16102")
    }

    @Test func codableThroughOurCodersIsTransparent() throws {
        #expect(try encoded(Self.sample) == Self.sample.pack())
        let envelope = Envelope(kind: "x", payload: Self.sample)
        let bytes = try encoded(envelope)
        #expect(try decoded(Envelope.self, bytes) == envelope)
        // The payload is spliced verbatim: the envelope equals a hand-built map.
        let expected = MessagePackValue.map([(.string("kind"), .string("x")), (.string("payload"), Self.sample)])
        #expect(bytes == expected.pack())
        // Any value decodes as MessagePackValue, and typed values decode from its bytes.
        #expect(try decoded(MessagePackValue.self, encoded(Item(id: 1, name: "n", done: true)))
            == .map([(.string("id"), .uint(1)), (.string("name"), .string("n")), (.string("done"), .bool(true))]))
    }

    @Test func codableThroughFoundationJSON() throws {
        let value = MessagePackValue.map([(.string("a"), .array([.int(-1), .string("x"), .bool(false), .nil]))])
        let json = try JSONEncoder().encode(value)
        #expect(String(decoding: json, as: UTF8.self) == #"{"a":[-1,"x",false,null]}"#)
        #expect(try JSONDecoder().decode(MessagePackValue.self, from: json) == value)
    }

    @Test func jsonTextParsesEveryKind() throws {
        let value = try MessagePackValue(jsonText: #" {"b": [true, false, null], "i": -9223372036854775808, "u": 18446744073709551615, "d": 1.5e3, "s": "q\"\\\u00e9\ud83d\ude00\n", "big": 18446744073709551616} "#)
        #expect(value == .map([
            (.string("b"), .array([.bool(true), .bool(false), .nil])),
            (.string("i"), .int(Int64.min)), (.string("u"), .uint(UInt64.max)),
            (.string("d"), .double(1500)), (.string("s"), .string("q\"\\é😀\n")),
            (.string("big"), .double(18446744073709551616)),
        ]))
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\"}", "01", "1.", "tru", "\"\\x\"", "\"\u{01}\"", "[1] 2", "\"\\ud800\""])
    func invalidJSONThrows(text: String) throws {
        let error = try #require(decodingError { _ = try MessagePackValue(jsonText: text) })
        #expect(error.message.hasPrefix("Invalid JSON"))
    }

    @Test func jsonNestingIsLimitedLikeUnpacking() throws {
        #expect(throws: DecodingError.self) {
            try MessagePackValue(jsonText: String(repeating: "[", count: 33) + String(repeating: "]", count: 33))
        }
        _ = try MessagePackValue(jsonText: String(repeating: "[", count: 32) + String(repeating: "]", count: 32))
    }

    @Test func jsonTextRendersEveryKind() {
        #expect(Self.sample.jsonText() == #"{"7":"int key","a":[1,[]],"b":true,"bin":"AP8=","d":0.1,"e":{"data":"AQI=","type":9},"f":1.5,"i":-5,"n":null,"s":"ü","t":"2023-11-14T22:13:20.000000005Z","u":18446744073709551615}"#)
        #expect(MessagePackValue.map([(.string("z"), .uint(1)), (.string("a"), .uint(2))]).jsonText(sortedKeys: false) == #"{"z":1,"a":2}"#)
        #expect(MessagePackValue.array([.double(.nan), .double(.infinity), .float(-.infinity), .double(2)]).jsonText() == "[null,null,null,2.0]")
        #expect(MessagePackValue.string("\u{1}\t").jsonText() == #""\u0001\t""#)
    }

    @Test(arguments: [
        (Int64(0), UInt32(0), "1970-01-01T00:00:00Z"),
        (-1, 500_000_000, "1969-12-31T23:59:59.5Z"),
        (951_782_400, 0, "2000-02-29T00:00:00Z"),
        (253_402_300_799, 999_999_999, "9999-12-31T23:59:59.999999999Z"),
        (-62_135_596_800, 0, "0001-01-01T00:00:00Z"),
    ])
    func timestampsRenderAsRFC3339(seconds: Int64, nanoseconds: UInt32, expected: String) {
        #expect(MessagePackValue.timestamp(seconds: seconds, nanoseconds: nanoseconds).jsonText() == "\"\(expected)\"")
    }

    @Test func jsonRoundTripKeepsIntegerPrecisionAndDoubleness() throws {
        let value = MessagePackValue.array([.uint(9_007_199_254_740_993), .int(-9_007_199_254_740_993), .double(3)])
        #expect(try MessagePackValue(jsonText: value.jsonText()) == value)
    }

    @Test func equalZerosHashEqually() {
        #expect(MessagePackValue.double(0) == .double(-0.0))
        #expect(MessagePackValue.double(0).hashValue == MessagePackValue.double(-0.0).hashValue)
        #expect(MessagePackValue.float(0).hashValue == MessagePackValue.float(-0.0).hashValue)
        #expect(Set<MessagePackValue>([.double(0), .double(-0.0), .float(-0.0), .float(0)]).count == 2)
    }
}
