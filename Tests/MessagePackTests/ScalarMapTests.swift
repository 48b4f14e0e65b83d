import Foundation
import Testing
@testable import MessagePack

/// The specialised decoding of `[String: V]` and `[Int: V]` with a scalar `V` (``ScalarMap``):
/// exact values, and the same errors, coding paths and messages as the generic form it
/// replaces for those types.
@Suite struct ScalarMapTests {
    /// `{k: v, ...}` as MessagePack, in the given order.
    private func map(_ entries: [(MessagePackValue, MessagePackValue)]) -> [UInt8] {
        MessagePackValue.map(entries.map { (key: $0.0, value: $0.1) }).pack()
    }

    @Test func everySpecialisedPairDecodesExactly() throws {
        #expect(try decoded([String: String].self, map([(.string("a"), .string("x")), (.string("é"), .string("ü…"))]))
            == ["a": "x", "é": "ü…"])
        #expect(try decoded([String: Int].self, map([(.string("min"), .int(Int64.min)), (.string("max"), .uint(UInt64(Int.max)))]))
            == ["min": Int.min, "max": Int.max])
        #expect(try decoded([String: Double].self, map([(.string("f"), .float(1.5)), (.string("d"), .double(-0.25)), (.string("i"), .uint(3))]))
            == ["f": 1.5, "d": -0.25, "i": 3])
        #expect(try decoded([String: Bool].self, map([(.string("t"), .bool(true)), (.string("f"), .bool(false))])) == ["t": true, "f": false])
        #expect(try decoded([Int: String].self, map([(.uint(0), .string("zero")), (.int(-7), .string("minus seven"))]))
            == [0: "zero", -7: "minus seven"])
        #expect(try decoded([Int: Int].self, map([(.uint(1), .int(-1)), (.string("2"), .uint(2))])) == [1: -1, 2: 2])
        #expect(try decoded([Int: Double].self, map([(.uint(1), .double(.infinity))])) == [1: .infinity])
        #expect(try decoded([Int: Bool].self, map([(.int(-1), .bool(true))])) == [-1: true])
    }

    @Test func aLargeMapRoundTripsEntryForEntry() throws {
        let catalog = Dictionary(uniqueKeysWithValues: (0 ..< 10_000).map { ($0 * 7 - 30_000, String(repeating: String($0), count: 8)) })
        #expect(try roundTrip(catalog).value == catalog)
        let byName = Dictionary(uniqueKeysWithValues: (0 ..< 10_000).map { ("key-\($0)", $0 * $0) })
        #expect(try roundTrip(byName).value == byName)
    }

    @Test func emptyMapsDecodeEmpty() throws {
        #expect(try decoded([String: String].self, bytes("80")) == [:])
        #expect(try decoded([Int: Bool].self, bytes("80")) == [:])
    }

    @Test func nestedDictionariesDecodeAndNameTheirPath() throws {
        struct Holder: Codable, Equatable { var tables: [String: [Int: String]] }
        let holder = Holder(tables: ["a": [1: "one", 2: "two"], "b": [:]])
        #expect(try roundTrip(holder).value == holder)
        let list: [[String: Int]] = [["x": 1], [:], ["y": -2]]
        #expect(try roundTrip(list).value == list)
        // {"tables": {"a": {1: 5}}}: the value 5 is not a String.
        let wrong = map([(.string("tables"), .map([(key: .string("a"), value: .map([(key: .uint(1), value: .uint(5))]))]))])
        let error = try #require(decodingError { _ = try decoded(Holder.self, wrong) })
        #expect(error.kind == .typeMismatch)
        #expect(error.path == ["tables", "a", "[1]"])
        #expect(error.message == "Expected String, found unsigned integer 5.")
    }

    @Test func otherKeyAndValueTypesStillDecodeThroughTheGenericForms() throws {
        let byDouble: [Double: String] = [1.5: "a", -2: "b"]
        #expect(try roundTrip(byDouble).value == byDouble)
        let byByte: [UInt8: Int] = [1: 10, 255: 20]
        #expect(try roundTrip(byByte).value == byByte)
        let optionals: [String: Int?] = ["some": 1, "none": nil]
        #expect(try roundTrip(optionals).value == optionals)
        let narrow: [Int: Int8] = [1: -128, 2: 127]
        #expect(try roundTrip(narrow).value == narrow)
        let items: [String: Item] = ["one": Item(id: 1, name: "n", done: true)]
        #expect(try roundTrip(items).value == items)
    }

    @Test func valuesOfTheWrongTypeThrowAtTheirKey() throws {
        let string = try #require(decodingError { _ = try decoded([String: String].self, map([(.string("k"), .uint(5))])) })
        #expect(string.kind == .typeMismatch)
        #expect(string.path == ["k"])
        #expect(string.message == "Expected String, found unsigned integer 5.")

        let int = try #require(decodingError { _ = try decoded([Int: Int].self, map([(.uint(3), .string("x"))])) })
        #expect(int.kind == .typeMismatch)
        #expect(int.path == ["[3]"])
        #expect(int.message == "Expected Int, found string.")

        let tooLarge = try #require(decodingError { _ = try decoded([String: Int].self, map([(.string("big"), .uint(UInt64.max))])) })
        #expect(tooLarge.kind == .dataCorrupted)
        #expect(tooLarge.path == ["big"])

        let double = try #require(decodingError { _ = try decoded([Int: Double].self, map([(.uint(1), .bool(true))])) })
        #expect(double.kind == .typeMismatch)
        #expect(double.path == ["[1]"])
        #expect(double.message == "Expected Double, found bool.")

        let bool = try #require(decodingError { _ = try decoded([String: Bool].self, map([(.string("b"), .nil)])) })
        #expect(bool.kind == .typeMismatch)
        #expect(bool.path == ["b"])
        #expect(bool.message == "Expected Bool, found nil.")

        // 0xff is never UTF-8.
        let invalid = try #require(decodingError { _ = try decoded([Int: String].self, bytes("81 01 a1ff")) })
        #expect(invalid.kind == .dataCorrupted)
        #expect(invalid.path == ["[1]"])
        #expect(invalid.message == "String is not valid UTF-8.")
    }

    @Test func keysOfTheWrongTypeThrowAtTheirPosition() throws {
        let stringKey = try #require(decodingError { _ = try decoded([String: Int].self, map([(.string("a"), .uint(1)), (.uint(7), .uint(2))])) })
        #expect(stringKey.kind == .typeMismatch)
        #expect(stringKey.path == ["[1]"])
        #expect(stringKey.message == "Expected String, found unsigned integer 7.")

        let notDigits = try #require(decodingError { _ = try decoded([Int: String].self, map([(.string("seven"), .string("x"))])) })
        #expect(notDigits.kind == .typeMismatch)
        #expect(notDigits.path == ["[0]"])
        #expect(notDigits.message == "Map key is a string that is not an integer.")

        let boolKey = try #require(decodingError { _ = try decoded([Int: Bool].self, map([(.bool(true), .bool(true))])) })
        #expect(boolKey.kind == .typeMismatch)
        #expect(boolKey.path == ["[0]"])

        let hugeKey = try #require(decodingError { _ = try decoded([Int: String].self, map([(.uint(UInt64.max), .string("x"))])) })
        #expect(hugeKey.kind == .dataCorrupted)
        #expect(hugeKey.path == ["[0]"])

        let notAMap = try #require(decodingError { _ = try decoded([Int: String].self, bytes("90")) })
        #expect(notAMap.kind == .typeMismatch)
        #expect(notAMap.message == "Expected a map, found array.")
    }

    @Test func duplicateKeysThrowAtTheMap() throws {
        struct Holder: Decodable { var entries: [Int: String] }
        // {"entries": {1: "a", 2: "b", 1: "c"}}
        let input = map([(.string("entries"), .map([(key: .uint(1), value: .string("a")), (key: .uint(2), value: .string("b")),
                                                    (key: .uint(1), value: .string("c"))]))])
        let byNumber = try #require(decodingError { _ = try decoded(Holder.self, input) })
        #expect(byNumber.kind == .dataCorrupted)
        #expect(byNumber.path == ["entries"])
        // The message names an integer key as its coding key does (as before this form existed).
        #expect(byNumber.message == "Duplicate map key Index 1.")
        // A string key and the integer it spells are the same key.
        let spelled = try #require(decodingError { _ = try decoded([Int: Int].self, map([(.uint(4), .uint(1)), (.string("4"), .uint(2))])) })
        #expect(spelled.message == "Duplicate map key Index 4.")
        let byName = try #require(decodingError { _ = try decoded([String: Bool].self, map([(.string("x"), .bool(true)), (.string("x"), .bool(true))])) })
        #expect(byName.kind == .dataCorrupted)
        #expect(byName.path == [])
        #expect(byName.message == "Duplicate map key x.")
    }
}
