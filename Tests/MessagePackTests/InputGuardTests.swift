import Testing
@testable import MessagePack

/// Malformed and hostile input: each case throws a `DecodingError`, never traps, hangs or over-allocates.
@Suite struct InputGuardTests {
    private func failure(_ input: [UInt8]) throws -> DecodingError {
        try #require(decodingError { _ = try decoded(MessagePackValue.self, input) })
    }

    @Test func emptyInput() throws {
        #expect(try failure([]).message.contains("Empty"))
    }

    @Test(arguments: ["cd01", "a3616263".dropLast(2).description, "92 01", "d9", "c70cff00", "de0001a161"])
    func truncatedInput(hexInput: String) throws {
        let error = try failure(bytes(hexInput))
        #expect(error.kind == .dataCorrupted)
        #expect(error.message.contains("Truncated") || error.message.contains("declares"))
    }

    @Test func reservedTypeByte() throws {
        let error = try failure([0x92, 0x01, 0xc1])
        #expect(error.message.contains("0xc1"))
        #expect(error.message.contains("byte 2"))
    }

    @Test func trailingBytes() throws {
        let error = try failure([0x01, 0x02, 0x03])
        #expect(error.message.contains("2 trailing bytes"))
    }

    @Test(arguments: [
        "dd ffffffff", "df ffffffff", "dc ffff", "de ffff 00",
        "91 dd ffffffff", "dd 00000002 dd ffffffff",
        // Headers buried in a string must not fool the fast scan into rejecting valid input;
        // these are real headers with impossible counts.
        "92 a3 dd0000 dd 7fffffff",
    ])
    func declaredSizesBeyondTheInputAreRejectedBeforeAllocation(hexInput: String) throws {
        let error = try failure(bytes(hexInput))
        #expect(error.kind == .dataCorrupted)
        #expect(error.message.contains("declares") || error.message.contains("Truncated"))
    }

    @Test func nestedClaimsMustFitTogether() throws {
        // Each array32 claims 3 elements (each fits alone), but together they owe more than remains.
        let input = bytes("dd00000003 dd00000003 dd00000003 01")
        #expect(try failure(input).message.contains("declares"))
    }

    @Test func headerLookalikesInsideStringsStillDecode() throws {
        // Payload bytes that look like array32 headers: the fast scan is suspicious,
        // the exact walk (msgpack-c measures the string) accepts it.
        // "ݿݿݿ" is U+077F three times: dd bf dd bf dd bf, valid UTF-8.
        let text = bytes("a6 ddbfddbfddbf")
        #expect(try decoded(MessagePackValue.self, text) == .string("\u{77F}\u{77F}\u{77F}"))
        let binary = bytes("92 c405 ddffffffff 01")
        #expect(try decoded(MessagePackValue.self, binary) == .array([.binary([0xdd, 0xff, 0xff, 0xff, 0xff]), .uint(1)]))
    }

    private func nested(_ depth: Int) -> [UInt8] {
        [UInt8](repeating: 0x91, count: depth - 1) + [0x90]
    }

    @Test func nestingUpToTheLimitDecodes() throws {
        #expect(MessagePack.maximumNestingDepth == 32)
        var value = try decoded(MessagePackValue.self, nested(32))
        var depth = 0
        while case .array(let elements) = value {
            depth += 1
            value = elements.first ?? .nil
        }
        #expect(depth == 32)
    }

    @Test(arguments: [33, 34, 100, 10_000])
    func nestingBeyondTheLimitIsAClearError(depth: Int) throws {
        let error = try failure(nested(depth))
        #expect(error.kind == .dataCorrupted)
        #expect(error.message.contains("deeper than 32"))
    }

    @Test func deepMapsCountToo() throws {
        // 33 maps, each {1: <next map>}; the innermost value is nil.
        var input: [UInt8] = []
        for _ in 0 ..< 33 { input += [0x81, 0x01] }
        input.append(0xc0)
        #expect(try failure(input).message.contains("deeper than 32"))
    }

    @Test func typedDecodingReportsHostileInputToo() throws {
        let error = try #require(decodingError { _ = try decoded(Snapshot.self, bytes("dfffffffff")) })
        #expect(error.kind == .dataCorrupted)
        #expect(error.path == [])
    }

    @Test func fastScanIsConservative() {
        bytes("dc0002 01 02").withUnsafeBytes { #expect(InputGuard.isPlainlySafe($0)) }
        bytes("dc0003 01 02").withUnsafeBytes { #expect(!InputGuard.isPlainlySafe($0)) }
        bytes("dd00").withUnsafeBytes { #expect(!InputGuard.isPlainlySafe($0)) }
        // A header after the first 8-byte word is still found by the word-at-a-time scan.
        bytes("99 0101010101010101 dd ffffffff").withUnsafeBytes { #expect(!InputGuard.isPlainlySafe($0)) }
        bytes("99 0101010101010101 01 01 01 01 01").withUnsafeBytes { #expect(InputGuard.isPlainlySafe($0)) }
        // Each claim fits alone, together they do not.
        bytes("dc0003 dc0003 01").withUnsafeBytes { #expect(!InputGuard.isPlainlySafe($0)) }
    }

    @Test func theFastScanFindsAHeaderAtEveryOffset() {
        // Wherever a claim sits (in the first or second word of a 16-byte turn, in the 8-byte
        // tail, in the last few bytes), the scan finds it: one that cannot fit is refused, one
        // that fits is not.
        for offset in 0 ..< 40 {
            for tail in 0 ..< 20 {
                let filler = { (count: Int) in [UInt8](repeating: 0x01, count: count) }
                let refused = filler(offset) + [0xdd, 0xff, 0xff, 0xff, 0xff] + filler(tail)
                refused.withUnsafeBytes { #expect(!InputGuard.isPlainlySafe($0), "claim at \(offset), \(tail) after") }
                let fits = filler(offset) + [0xdc, 0x00, UInt8(tail)] + filler(tail)
                fits.withUnsafeBytes { #expect(InputGuard.isPlainlySafe($0), "claim of \(tail) at \(offset)") }
            }
        }
    }

    @Test func exactWalkMeasuresValues() throws {
        let length = try bytes("82 a161 01 a162 92 c3 cb3ff8000000000000").withUnsafeBytes {
            try InputGuard.validate($0)
        }
        #expect(length == 17)
    }
}
