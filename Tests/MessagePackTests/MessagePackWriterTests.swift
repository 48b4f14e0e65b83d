import Testing
@testable import MessagePack

/// Exact bytes for every wire form in the MessagePack specification, packed by msgpack-c.
@Suite struct MessagePackWriterTests {
    private func packed(_ body: (MessagePackWriter) -> Void) -> String {
        let writer = MessagePackWriter()
        body(writer)
        return hex(writer.bytes)
    }

    @Test func nilAndBooleans() {
        #expect(packed { $0.packNil() } == "c0")
        #expect(packed { $0.packBool(false) } == "c2")
        #expect(packed { $0.packBool(true) } == "c3")
    }

    @Test(arguments: [
        (Int64(0), "00"), (127, "7f"), (-1, "ff"), (-32, "e0"),
        (-33, "d0df"), (-128, "d080"), (-129, "d1ff7f"), (-32768, "d18000"),
        (-32769, "d2ffff7fff"), (Int64(Int32.min), "d280000000"),
        (Int64(Int32.min) - 1, "d3ffffffff7fffffff"), (Int64.min, "d38000000000000000"),
        (128, "cc80"), (255, "ccff"), (256, "cd0100"), (65535, "cdffff"), (65536, "ce00010000"),
        (Int64(UInt32.max), "ceffffffff"), (Int64(UInt32.max) + 1, "cf0000000100000000"),
        (Int64.max, "cf7fffffffffffffff"),
    ])
    func signedIntegersUseSmallestForm(value: Int64, expected: String) {
        #expect(packed { $0.packInt(value) } == expected)
    }

    @Test(arguments: [
        (UInt64(0), "00"), (127, "7f"), (128, "cc80"), (255, "ccff"), (256, "cd0100"),
        (65535, "cdffff"), (65536, "ce00010000"), (UInt64(UInt32.max), "ceffffffff"),
        (UInt64(UInt32.max) + 1, "cf0000000100000000"), (UInt64.max, "cfffffffffffffffff"),
    ])
    func unsignedIntegersUseSmallestForm(value: UInt64, expected: String) {
        #expect(packed { $0.packUInt(value) } == expected)
    }

    @Test func floats() {
        #expect(packed { $0.packFloat(1.5) } == "ca3fc00000")
        #expect(packed { $0.packDouble(1.5) } == "cb3ff8000000000000")
        #expect(packed { $0.packDouble(.infinity) } == "cb7ff0000000000000")
        #expect(packed { $0.packFloat(-.infinity) } == "caff800000")
    }

    @Test func strings() {
        #expect(packed { $0.packString("") } == "a0")
        #expect(packed { $0.packString("abc") } == "a3616263")
        #expect(packed { $0.packString(String(repeating: "a", count: 31)) }.hasPrefix("bf61"))
        #expect(packed { $0.packString(String(repeating: "a", count: 32)) }.hasPrefix("d92061"))
        #expect(packed { $0.packString(String(repeating: "a", count: 256)) }.hasPrefix("da010061"))
        #expect(packed { $0.packString(String(repeating: "a", count: 65536)) }.hasPrefix("db0001000061"))
        #expect(packed { $0.packString("é") } == "a2c3a9")
    }

    @Test func everyStringRepresentationPacksItsUTF8() {
        let large = String(repeating: "snow ☃ ", count: 40)
        let strings = ["", "id", "fifteen bytes!!", "sixteen bytes!!!", large,
                       String(large.dropFirst(3)), String(Substring(large).prefix(20)), "é" + "\u{301}"]
        for string in strings {
            var copy = string
            let expected = copy.withUTF8 { utf8 in packed { $0.packString(utf8: UnsafeRawBufferPointer(utf8)) } }
            #expect(packed { $0.packString(string) } == expected)
        }
    }

    @Test func binaries() {
        #expect(packed { $0.packBinary([]) } == "c400")
        #expect(packed { $0.packBinary([1, 2]) } == "c4020102")
        #expect(packed { $0.packBinary([UInt8](repeating: 7, count: 256)) }.hasPrefix("c5010007"))
        let big = packed { $0.packBinary([UInt8](repeating: 7, count: 65536)) }
        #expect(big.hasPrefix("c60001000007"))
        #expect(big.count == (5 + 65536) * 2)
    }

    @Test func containerHeaders() {
        #expect(packed { $0.packArrayHeader(0) } == "90")
        #expect(packed { $0.packArrayHeader(15) } == "9f")
        #expect(packed { $0.packArrayHeader(16) } == "dc0010")
        #expect(packed { $0.packArrayHeader(65536) } == "dd00010000")
        #expect(packed { $0.packMapHeader(0) } == "80")
        #expect(packed { $0.packMapHeader(15) } == "8f")
        #expect(packed { $0.packMapHeader(16) } == "de0010")
        #expect(packed { $0.packMapHeader(65536) } == "df00010000")
    }

    @Test func extensions() {
        #expect(packed { $0.packExtension(type: 1, data: [0xaa]) } == "d401aa")
        #expect(packed { $0.packExtension(type: 1, data: [0xaa, 0xbb]) } == "d501aabb")
        #expect(packed { $0.packExtension(type: 1, data: [1, 2, 3, 4]) } == "d60101020304")
        #expect(packed { $0.packExtension(type: 1, data: [UInt8](repeating: 0, count: 8)) } == "d701" + String(repeating: "00", count: 8))
        #expect(packed { $0.packExtension(type: -2, data: [UInt8](repeating: 0, count: 16)) } == "d8fe" + String(repeating: "00", count: 16))
        #expect(packed { $0.packExtension(type: 1, data: [1, 2, 3]) } == "c70301010203")
        #expect(packed { $0.packExtension(type: 1, data: [UInt8](repeating: 9, count: 256)) }.hasPrefix("c801000109"))
        #expect(packed { $0.packExtension(type: 1, data: [UInt8](repeating: 9, count: 65536)) }.hasPrefix("c9000100000109"))
    }

    @Test func timestampsUseTheThreeSpecForms() {
        // timestamp32: seconds fit in 32 bits, no nanoseconds.
        #expect(packed { $0.packTimestamp(seconds: 1_700_000_000, nanoseconds: 0) } == "d6ff6553f100")
        // timestamp64: 30-bit nanoseconds + 34-bit seconds.
        #expect(packed { $0.packTimestamp(seconds: 1_700_000_000, nanoseconds: 500_000_000) } == "d7ff773594006553f100")
        // timestamp96: negative seconds.
        #expect(packed { $0.packTimestamp(seconds: -1, nanoseconds: 999_999_999) } == "c70cff3b9ac9ffffffffffffffffff")
    }

    @Test func resetKeepsWorkingAndAppendEncodedSplices() {
        let writer = MessagePackWriter()
        writer.packString("first")
        #expect(writer.count == 6)
        writer.reset()
        #expect(writer.count == 0)
        #expect(writer.bytes == [])
        writer.packArrayHeader(2)
        writer.packInt(1)
        let inner = MessagePackWriter()
        inner.packBool(true)
        inner.withUnsafeBytes { writer.appendEncoded($0) }
        #expect(hex(writer.bytes) == "9201c3")
    }
}
