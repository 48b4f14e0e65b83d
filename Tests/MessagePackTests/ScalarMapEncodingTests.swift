import Foundation
import Testing
@testable import MessagePack

/// The specialised encoding of `[String: V]` and `[Int: V]` with a scalar `V`
/// (``ScalarMapEncoding``): exactly the bytes of the generic form.
@Suite struct ScalarMapEncodingTests {
    /// A scalar that the encoder reaches through `encode(to:)`, so a dictionary of it takes the
    /// generic form and writes the same value bytes as the scalar itself.
    struct Boxed<Value: Codable & Hashable>: Codable, Hashable {
        var value: Value
        init(_ value: Value) { self.value = value }
        init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Value.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    /// Checks that `dictionary` encodes, keys sorted, to the generic form's bytes and to the map
    /// written entry by entry, and that it round-trips either way.
    func check<K: Codable & Hashable & Comparable, V: Codable & Hashable>(
        _ dictionary: [K: V], key: (K) -> MessagePackValue, value: (V) -> MessagePackValue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let bytes = try encoded(dictionary)
        let generic = try encoded(dictionary.mapValues(Boxed.init))
        #expect(bytes == generic, sourceLocation: sourceLocation)
        let byHand = MessagePackValue.map(dictionary.sorted { $0.key < $1.key }.map { (key: key($0.key), value: value($0.value)) }).pack()
        #expect(bytes == byHand, sourceLocation: sourceLocation)
        #expect(try decoded([K: V].self, bytes) == dictionary, sourceLocation: sourceLocation)
        #expect(try decoded([K: V].self, encoded(dictionary, sortKeys: false)) == dictionary, sourceLocation: sourceLocation)
    }

    func int(_ value: Int) -> MessagePackValue { value < 0 ? .int(Int64(value)) : .uint(UInt64(value)) }

    @Test func everySpecialisedPairWritesTheGenericBytes() throws {
        let ints = Dictionary(uniqueKeysWithValues: (0 ..< 300).map { ($0 * 977 - 140_000, $0) })
        try check(ints.mapValues { String(repeating: "é", count: $0 % 40) }, key: int, value: { .string($0) })
        try check(ints.mapValues { $0 * -65_537 }, key: int, value: int)
        try check(ints.mapValues { Double($0) / 3 }, key: int, value: { .double($0) })
        try check(ints.mapValues { $0 % 3 == 0 }, key: int, value: { .bool($0) })
        let names = Dictionary(uniqueKeysWithValues: (0 ..< 300).map { ("key \($0 * 7 % 307) ü", $0) })
        try check(names.mapValues { String($0) }, key: { .string($0) }, value: { .string($0) })
        try check(names.mapValues { Int.max - $0 }, key: { .string($0) }, value: int)
        try check(names.mapValues { -Double($0) }, key: { .string($0) }, value: { .double($0) })
        try check(names.mapValues { $0 % 2 == 0 }, key: { .string($0) }, value: { .bool($0) })
        try check([Int: String](), key: int, value: { .string($0) })
        // Past IntegerKeyOrder's threshold, keys of both signs and every width sort by radix.
        let wide = Dictionary(uniqueKeysWithValues: (0 ..< 2_000).map { ($0 % 2 == 0 ? $0 &* 0x7F4A_7C15_9E37_79B9 : $0 - 1_000, $0) })
        try check(wide.mapValues { String($0) }, key: int, value: { .string($0) })
        try check(wide, key: int, value: int)
    }

    @Test func aDictionaryInsideAStructIsWrittenInPlace() throws {
        struct Catalog: Codable, Equatable { var fills: Int; var entries: [Int: String] }
        struct BoxedCatalog: Codable { var fills: Int; var entries: [Int: Boxed<String>] }
        let entries = Dictionary(uniqueKeysWithValues: (0 ..< 1_000).map { ($0, String(repeating: String($0), count: 3)) })
        let bytes = try encoded(Catalog(fills: 2, entries: entries))
        #expect(bytes == (try encoded(BoxedCatalog(fills: 2, entries: entries.mapValues(Boxed.init)))))
        #expect(try decoded(Catalog.self, bytes) == Catalog(fills: 2, entries: entries))
    }
}
