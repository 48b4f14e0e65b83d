import Foundation
import Testing
@testable import MessagePack

struct Limits: Codable, Equatable {
    var small: UInt8
    var signed: Int8
}

struct Everything: Codable, Equatable {
    var bool: Bool
    var i8: Int8, i16: Int16, i32: Int32, i64: Int64, int: Int
    var u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64, uint: UInt
    var float: Float, double: Double
    var string: String
    var bytes: [UInt8], data: Data
    var date: Date, uuid: UUID
    var optional: String?, missing: Int?
    var list: [[Int]]
    var byName: [String: Double], byNumber: [Int: String]
    var action: Action
    var nested: Snapshot
}

@Suite struct MessagePackDecoderTests {
    @Test func roundTripsEveryMappedType() throws {
        let value = Everything(
            bool: true, i8: .min, i16: .min, i32: .min, i64: .min, int: .max,
            u8: .max, u16: .max, u32: .max, u64: .max, uint: .max,
            float: 1.25, double: -.pi, string: "snow ☃ 🎿",
            bytes: [0, 1, 255], data: Data([9, 8]),
            date: Date(timeIntervalSince1970: 1_234_567_890.25),
            uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            optional: "here", missing: nil,
            list: [[], [1, 2], [-3]],
            byName: ["z": 1, "a": 0.5], byNumber: [3: "three", -7: "minus seven"],
            action: .rename("x", force: false),
            nested: Snapshot(version: 2, counter: -9, items: [Item(id: 1, name: "n", done: true)]))
        let result = try roundTrip(value)
        #expect(result.value == value)
        // Deterministic: encoding the decoded value gives the same bytes.
        #expect(try encoded(result.value) == result.bytes)
    }

    @Test func everyIntegerWidthRoundTripsAtItsLimits() throws {
        #expect(try roundTrip([Int8.min, Int8.max]).value == [Int8.min, Int8.max])
        #expect(try roundTrip([Int16.min, Int16.max]).value == [Int16.min, Int16.max])
        #expect(try roundTrip([Int32.min, Int32.max]).value == [Int32.min, Int32.max])
        #expect(try roundTrip([Int64.min, Int64.max]).value == [Int64.min, Int64.max])
        #expect(try roundTrip([UInt8.max, UInt16.max.magnitude > 0 ? 1 : 0]).value == [UInt8.max, 1])
        #expect(try roundTrip([UInt16.max]).value == [UInt16.max])
        #expect(try roundTrip([UInt32.max]).value == [UInt32.max])
        #expect(try roundTrip([UInt64.max]).value == [UInt64.max])
        #expect(try roundTrip([UInt.max, 0]).value == [UInt.max, 0])
    }

    @Test func valuesThatDoNotFitThrowWithCodingPath() throws {
        let tooBig = try #require(decodingError { _ = try decoded(UInt8.self, encoded(300)) })
        #expect(tooBig.kind == .dataCorrupted)
        let negative = try #require(decodingError { _ = try decoded(UInt.self, encoded(-1)) })
        #expect(negative.kind == .dataCorrupted)
        let inStruct = try #require(decodingError {
            _ = try decoded(Limits.self, encoded(["small": 1, "signed": 200]))
        })
        #expect(inStruct.kind == .dataCorrupted)
        #expect(inStruct.path == ["signed"])
        let inArray = try #require(decodingError { _ = try decoded([Int8].self, encoded([1, -129])) })
        #expect(inArray.path == ["[1]"])
        let wrongType = try #require(decodingError { _ = try decoded(Int.self, encoded("1")) })
        #expect(wrongType.kind == .typeMismatch)
    }

    @Test func floatWidthsConvertOnlyWhenExact() throws {
        #expect(try decoded(Double.self, encoded(Float(1.5))) == 1.5)
        #expect(try decoded(Float.self, encoded(Double(0.25))) == 0.25)
        #expect(try decoded(Double.self, encoded(7)) == 7)
        #expect(try decoded(Float.self, encoded(Double.infinity)) == .infinity)
        #expect(try decoded(Float.self, encoded(Double.nan)).isNaN)
        #expect(try decoded(Double.self, encoded(Float.nan)).isNaN)
        #expect(try decoded(Double.self, encoded(-Double.infinity)) == -.infinity)
        let inexact = try #require(decodingError { _ = try decoded(Float.self, encoded(0.1)) })
        #expect(inexact.kind == .dataCorrupted)
        let bigInteger = try #require(decodingError { _ = try decoded(Double.self, encoded(UInt64.max - 1)) })
        #expect(bigInteger.kind == .dataCorrupted)
    }

    @Test func invalidUTF8IsAnError() throws {
        let error = try #require(decodingError { _ = try decoded(String.self, bytes("a2 c3 28")) })
        #expect(error.kind == .dataCorrupted)
        #expect(error.message.contains("UTF-8"))
    }

    @Test func datesDecodeFromAllThreeTimestampForms() throws {
        #expect(try decoded(Date.self, bytes("d6ff6553f100")) == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(try decoded(Date.self, bytes("d7ff773594006553f100")) == Date(timeIntervalSince1970: 1_700_000_000.5))
        #expect(try decoded(Date.self, bytes("c70cff1dcd6500ffffffffffffffff")) == Date(timeIntervalSince1970: -0.5))
        let otherExtension = try #require(decodingError { _ = try decoded(Date.self, bytes("d60100000000")) })
        #expect(otherExtension.kind == .typeMismatch)
        let badNanoseconds = try #require(decodingError { _ = try decoded(Date.self, bytes("c70cff ffffffff 0000000000000000")) })
        #expect(badNanoseconds.kind == .dataCorrupted)
    }

    @Test func uuidFromBinaryOrCanonicalString() throws {
        let uuid = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
        #expect(try decoded(UUID.self, encoded(uuid)) == uuid)
        #expect(try decoded(UUID.self, encoded("00112233-4455-6677-8899-aabbccddeeff")) == uuid)
        #expect(try #require(decodingError { _ = try decoded(UUID.self, encoded([UInt8](repeating: 0, count: 15))) }).kind
            == .dataCorrupted)
    }

    @Test func dataAndBytesAcceptBinary() throws {
        #expect(try decoded(Data.self, bytes("c403010203")) == Data([1, 2, 3]))
        #expect(try decoded([UInt8].self, bytes("c400")) == [])
        #expect(try decoded([UInt8].self, bytes("920102")) == [1, 2])
    }

    @Test func enumsDecodeFromSwiftShapeAndFromJSONTypedActions() throws {
        for action in [Action.countUp, .add(amount: -4), .rename("r", force: true)] {
            #expect(try roundTrip(action).value == action)
        }
        let fromJSON = try MessagePackValue(jsonText: #"{"countUp":{}}"#).pack()
        #expect(try decoded(Action.self, fromJSON) == .countUp)
        let withPayload = try MessagePackValue(jsonText: #"{"add":{"amount":12}}"#).pack()
        #expect(try decoded(Action.self, withPayload) == .add(amount: 12))
    }

    @Test func superDecoderReadsSuperKey() throws {
        let value = try roundTrip(Derived(baseValue: 3, derivedValue: "x")).value
        #expect(value.baseValue == 3)
        #expect(value.derivedValue == "x")
    }

    @Test func missingKeyAndWrongContainerErrors() throws {
        let missing = try #require(decodingError { _ = try decoded(Item.self, encoded(["id": 1])) })
        #expect(missing.kind == .keyNotFound)
        let notAMap = try #require(decodingError { _ = try decoded(Item.self, encoded([1, 2])) })
        #expect(notAMap.kind == .typeMismatch)
        let deep = try #require(decodingError {
            _ = try decoded(Snapshot.self, MessagePackValue(jsonText: #"{"version":1,"counter":2,"items":[{"id":1,"name":"a","done":3}]}"#).pack())
        })
        #expect(deep.kind == .typeMismatch)
        #expect(deep.path == ["items", "[0]", "done"])
    }

    @Test func duplicateKeysAreRejected() throws {
        // {"id": 1, "id": 2, "name": "", "done": true}
        let duplicate = bytes("84 a2696401 a2696402 a46e616d65a0 a4646f6e65c3")
        let structError = try #require(decodingError { _ = try decoded(Item.self, duplicate) })
        #expect(structError.kind == .dataCorrupted)
        #expect(structError.message.contains("Duplicate"))
        let dictionaryError = try #require(decodingError { _ = try decoded([String: MessagePackValue].self, duplicate) })
        #expect(dictionaryError.kind == .dataCorrupted)
        let nested = try #require(decodingError { _ = try decoded([Item].self, bytes("91") + duplicate) })
        #expect(nested.path == ["[0]"])
    }

    /// Keys alike in length and first byte, of every length the key comparison treats apart
    /// (one byte, two or three, four to seven, eight, more than eight).
    struct LookAlikes: Decodable, Equatable {
        var values: [String: Int] = [:]
        enum CodingKeys: String, CodingKey, CaseIterable {
            case a, ab, ac, abc, abd, abcd, abce, abcdefg, abcdefh, abcdefgh, abcdefgi
            case abcdefghi, abcdefghj, abcdefghijklmnop, abcdefghijklmnoq, abcdefghijklmnopq, abcdefghijklmnopr
        }
        init(values: [String: Int]) { self.values = values }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            for key in CodingKeys.allCases { values[key.rawValue] = try container.decode(Int.self, forKey: key) }
        }
    }

    /// A map of `keys` in order, each key's value its position.
    func mapOf(_ keys: [String]) -> [UInt8] {
        let writer = MessagePackWriter()
        writer.packMapHeader(keys.count)
        for (position, key) in keys.enumerated() {
            writer.packString(key)
            writer.packInt(Int64(position))
        }
        return writer.bytes
    }

    @Test func keysAlikeInLengthAndFirstByteAreToldApart() throws {
        let keys = LookAlikes.CodingKeys.allCases.map(\.rawValue)
        // Written in reverse, so that no lookup finds its key where the one before it ended.
        let reversed = Array(keys.reversed())
        let lookAlikes = try decoded(LookAlikes.self, mapOf(reversed))
        #expect(lookAlikes == LookAlikes(values: Dictionary(uniqueKeysWithValues: reversed.enumerated().map { ($1, $0) })))
        for key in keys {
            // Each key again after its look-alikes, in a map small enough to be checked without
            // an index, and after all the keys (a map of more than 16 entries is indexed).
            let alikes = keys.filter { $0.count == key.count && $0.first == key.first }
            #expect(try decoded(AnyKeyed.self, mapOf(alikes)).count == alikes.count)
            let small = try #require(decodingError { _ = try decoded(AnyKeyed.self, mapOf(alikes + [key])) })
            #expect(small.message == "Duplicate map key \"\(key)\".")
            let indexed = try #require(decodingError { _ = try decoded(LookAlikes.self, mapOf(keys + [key])) })
            #expect(indexed.message == "Duplicate map key \"\(key)\".")
        }
    }

    /// Reads a map with any string keys as a struct would, and counts them.
    struct AnyKeyed: Decodable {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        let count: Int
        init(from decoder: any Decoder) throws { count = try decoder.container(keyedBy: Key.self).allKeys.count }
    }

    @Test func aSmallMapWithAnIntegerKeyIsStillCheckedForDuplicateStrings() throws {
        // {1: 1, "ab": 2, "ac": 3, "ab": 4}, decoded as a struct whose keys accept integers (the
        // first key is not a string, so the keys are compared pair by pair).
        let writer = MessagePackWriter()
        writer.packMapHeader(4)
        writer.packInt(1); writer.packInt(1)
        for (key, value) in [("ab", 2), ("ac", 3), ("ab", 4)] { writer.packString(key); writer.packInt(Int64(value)) }
        let asStruct = try #require(decodingError { _ = try decoded(IntegerKeyed.self, writer.bytes) })
        #expect(asStruct.message == "Duplicate map key \"ab\".")
    }

    /// Accepts integer keys, so a map with one is checked pair by pair.
    struct IntegerKeyed: Decodable {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int?
            init(stringValue: String) { self.stringValue = stringValue }
            init(intValue: Int) { stringValue = "\(intValue)"; self.intValue = intValue }
        }
        init(from decoder: any Decoder) throws { _ = try decoder.container(keyedBy: Key.self) }
    }

    @Test func aByteAbove0x7fAnywhereInAStringIsValidatedAsUTF8() throws {
        // Strings of 1 to 20 bytes, with an invalid byte at each position in turn: every one is
        // refused, wherever the ASCII check's loads (which may overlap) meet it; a valid
        // two-byte character there decodes.
        for length in 1 ... 20 {
            for position in 0 ..< length {
                var invalid = [UInt8](repeating: 0x61, count: length)
                invalid[position] = 0xff
                let writer = MessagePackWriter()
                writer.packArrayHeader(1)
                invalid.withUnsafeBytes { writer.packString(utf8: $0) }
                let error = try #require(decodingError { _ = try decoded([String].self, writer.bytes) })
                #expect(error.message == "String is not valid UTF-8.", "\(length) bytes, 0xff at \(position)")
                guard position + 1 < length else { continue }
                let valid = String(repeating: "a", count: position) + "é" + String(repeating: "a", count: length - position - 2)
                #expect(try decoded([String].self, encoded([valid])) == [valid])
            }
        }
    }

    @Test func nonStringKeysAreRejectedWhereAStructIsExpected() throws {
        // {1: 1, "name": "", "done": true, "id": 1}
        let input = bytes("84 0101 a46e616d65a0 a4646f6e65c3 a2696401")
        let error = try #require(decodingError { _ = try decoded(Item.self, input) })
        #expect(error.kind == .dataCorrupted)
        #expect(error.message.contains("not a string key"))
        let arrayKey = try #require(decodingError { _ = try decoded(Item.self, bytes("81 9101 01")) })
        #expect(arrayKey.kind == .dataCorrupted)
    }

    @Test func integerKeyedDictionariesAcceptStringDigitsFromJSON() throws {
        #expect(try decoded([Int: String].self, MessagePackValue(jsonText: #"{"5":"five"}"#).pack()) == [5: "five"])
        #expect(try decoded([Int: String].self, encoded([5: "five"])) == [5: "five"])
    }

    @Test func largeMapsUseTheIndexAndStillRejectDuplicates() throws {
        struct Wide: Decodable { let k0: Int; let k19: Int }
        var entries = (0 ..< 20).map { (key: MessagePackValue.string("k\($0)"), value: MessagePackValue.uint(UInt64($0))) }
        let wide = try decoded(Wide.self, MessagePackValue.map(entries).pack())
        #expect(wide.k0 == 0 && wide.k19 == 19)
        entries.append((.string("k3"), .uint(0)))
        let error = try #require(decodingError { _ = try decoded(Wide.self, MessagePackValue.map(entries).pack()) })
        #expect(error.message.contains("Duplicate"))
    }

    @Test func userInfoAndInputFormsAreSupported() throws {
        struct Probe: Decodable {
            static let key = CodingUserInfoKey(rawValue: "probe")!
            let seen: String
            init(from decoder: any Decoder) throws { seen = decoder.userInfo[Self.key] as? String ?? "missing" }
        }
        let decoder = MessagePackDecoder(userInfo: [Probe.key: "yes"])
        #expect(try decoder.decode(Probe.self, from: [0xc0]).seen == "yes")
        #expect(try MessagePackDecoder().decode(Int.self, from: Data([0x05])) == 5)
        let frame: [UInt8] = [0xa1, 0x7a]
        #expect(try frame.withUnsafeBytes { try MessagePackDecoder().decode(String.self, from: $0) } == "z")
    }
}
