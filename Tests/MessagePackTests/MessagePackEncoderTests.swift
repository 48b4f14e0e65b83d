import Foundation
import Testing
@testable import MessagePack

struct Item: Codable, Equatable {
    var id: Int
    var name: String
    var done: Bool
}

struct Snapshot: Codable, Equatable {
    var version: Int
    var counter: Int64
    var items: [Item]
}

enum Action: Codable, Equatable {
    case countUp
    case add(amount: Int)
    case rename(String, force: Bool)
}

/// A class hierarchy using superEncoder/superDecoder, as Foundation documents it.
class Base: Codable {
    var baseValue: Int
    init(baseValue: Int) { self.baseValue = baseValue }
}

final class Derived: Base {
    var derivedValue: String
    init(baseValue: Int, derivedValue: String) {
        self.derivedValue = derivedValue
        super.init(baseValue: baseValue)
    }
    enum CodingKeys: String, CodingKey { case derivedValue }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        derivedValue = try container.decode(String.self, forKey: .derivedValue)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(derivedValue, forKey: .derivedValue)
        try super.encode(to: container.superEncoder())
    }
}

/// Fills a nested container after writing a later sibling, which Codable allows.
struct OutOfOrder: Encodable {
    enum CodingKeys: String, CodingKey { case list, after }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        try container.encode(true, forKey: .after)
        try list.encode(1)
        var inner = list.nestedContainer(keyedBy: CodingKeys.self)
        try list.encode(2)
        try inner.encode("x", forKey: .after)
    }
}

@Suite struct MessagePackEncoderTests {
    @Test func booleansAndEveryIntegerWidthExactBytes() throws {
        #expect(hex(try encoded(true)) == "c3")
        #expect(hex(try encoded(Int8(-128))) == "d080")
        #expect(hex(try encoded(Int8(5))) == "05")
        #expect(hex(try encoded(Int16(-300))) == "d1fed4")
        #expect(hex(try encoded(Int32(70000))) == "ce00011170")
        #expect(hex(try encoded(Int64.min)) == "d38000000000000000")
        #expect(hex(try encoded(Int(-33))) == "d0df")
        #expect(hex(try encoded(UInt8(200))) == "ccc8")
        #expect(hex(try encoded(UInt16(65535))) == "cdffff")
        #expect(hex(try encoded(UInt32.max)) == "ceffffffff")
        #expect(hex(try encoded(UInt64.max)) == "cfffffffffffffffff")
        #expect(hex(try encoded(UInt(1))) == "01")
    }

    @Test func floatsStayInTheirWidth() throws {
        #expect(hex(try encoded(Float(0.5))) == "ca3f000000")
        #expect(hex(try encoded(0.5)) == "cb3fe0000000000000")
        #expect(hex(try encoded(Double.nan)).hasPrefix("cb7ff8"))
        #expect(hex(try encoded(-Double.infinity)) == "cbfff0000000000000")
    }

    @Test func stringsBytesDataAndOptionals() throws {
        #expect(hex(try encoded("hi")) == "a26869")
        #expect(hex(try encoded([UInt8]([1, 2, 3]))) == "c403010203")
        #expect(hex(try encoded(Data([0xff]))) == "c401ff")
        #expect(hex(try encoded(Int?.none)) == "c0")
        #expect(hex(try encoded([Int?.none, 1])) == "92c001")
        #expect(hex(try encoded([String]())) == "90")
    }

    @Test func datesUseTimestampExtension() throws {
        #expect(hex(try encoded(Date(timeIntervalSince1970: 1_700_000_000))) == "d6ff6553f100")
        #expect(hex(try encoded(Date(timeIntervalSince1970: 1_700_000_000.5))) == "d7ff773594006553f100")
        #expect(hex(try encoded(Date(timeIntervalSince1970: -0.5))) == "c70cff1dcd6500ffffffffffffffff")
    }

    @Test func uuidIsSixteenByteBinary() throws {
        let uuid = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
        #expect(hex(try encoded(uuid)) == "c41000112233445566778899aabbccddeeff")
    }

    @Test func structKeysKeepDeclarationOrder() throws {
        let item = Item(id: 1, name: "a", done: false)
        // {"id": 1, "name": "a", "done": false}
        #expect(hex(try encoded(item)) == "83a2696401a46e616d65a161a4646f6e65c2")
    }

    @Test func nestedSnapshotExactBytes() throws {
        let snapshot = Snapshot(version: 1, counter: -1, items: [Item(id: 2, name: "", done: true)])
        #expect(hex(try encoded(snapshot))
            == "83a776657273696f6e01a7636f756e746572ffa56974656d739183a2696402a46e616d65a0a4646f6e65c3")
    }

    @Test func stringKeyedDictionariesAreSortedAndDeterministic() throws {
        var first: [String: Int] = [:]
        var second: [String: Int] = [:]
        let keys = (0 ..< 50).map { "key\($0)" }
        for key in keys { first[key] = key.count }
        for key in keys.reversed() { second[key] = key.count }
        let bytesA = try encoded(first)
        #expect(bytesA == (try encoded(second)))
        #expect(hex(try encoded(["b": 2, "a": 1])) == "82a16101a16202")
    }

    @Test func integerKeyedDictionariesUseIntegerKeys() throws {
        #expect(hex(try encoded([10: "x", -1: "y"])) == "82ffa179 0aa178".replacingOccurrences(of: " ", with: ""))
    }

    @Test func unsortedOptionKeepsDictionaryContents() throws {
        let data = try encoded(["b": 2, "a": 1], sortKeys: false)
        #expect(try decoded([String: Int].self, data) == ["a": 1, "b": 2])
    }

    @Test func enumsAsSwiftSynthesisesThem() throws {
        #expect(hex(try encoded(Action.countUp)) == "81a7636f756e74557080")
        #expect(hex(try encoded(Action.add(amount: 3))) == "81a3616464 81a6616d6f756e7403".replacingOccurrences(of: " ", with: ""))
        #expect(hex(try encoded(Action.rename("n", force: true)))
            == "81a672656e616d65 82a25f30a16e a5666f726365c3".replacingOccurrences(of: " ", with: ""))
    }

    @Test func superEncoderWritesSuperKey() throws {
        let value = Derived(baseValue: 7, derivedValue: "d")
        #expect(hex(try encoded(value))
            == "82ac64657269766564 56616c7565a164 a5737570657281a9626173 6556616c756507".replacingOccurrences(of: " ", with: ""))
    }

    @Test func nestedContainersFilledOutOfOrderAreSplicedAtTheirPosition() throws {
        // {"list": [1, {"after": "x"}, 2], "after": true}
        #expect(hex(try encoded(OutOfOrder()))
            == "82a46c697374930181a56166746572a17802a56166746572c3")
    }

    @Test func encodeIntoReusedWriterAppends() throws {
        let writer = MessagePackWriter()
        try MessagePackEncoder().encode(1, into: writer)
        try MessagePackEncoder().encode("a", into: writer)
        #expect(hex(writer.bytes) == "01a161")
    }

    @Test func userInfoReachesEncodeImplementations() throws {
        struct Probe: Encodable {
            static let key = CodingUserInfoKey(rawValue: "probe")!
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(encoder.userInfo[Self.key] as? String ?? "missing")
            }
        }
        let encoder = MessagePackEncoder(userInfo: [Probe.key: "seen"])
        #expect(try encoder.encode(Probe()) == MessagePackValue.string("seen").pack())
    }
}

/// Dictionary keys other than String and Int.
@Suite struct DictionaryKeyTests {
    enum Color: String, Codable, CodingKeyRepresentable { case red, blue }
    struct Point: Codable, Hashable { var x: Int }

    @Test func codingKeyRepresentableKeysAreSortedStrings() throws {
        let bytes = try encoded([Color.red: 1, Color.blue: 2])
        #expect(hex(bytes) == "82a4626c756502a37265640 1".replacingOccurrences(of: " ", with: ""))
        #expect(try decoded([Color: Int].self, bytes) == [.red: 1, .blue: 2])
    }

    @Test func otherKeysUseSwiftsFlatArraySortedByKeyBytes() throws {
        let value = [Point(x: 2): "b", Point(x: 1): "a"]
        let bytes = try encoded(value)
        // [{"x": 1}, "a", {"x": 2}, "b"]
        #expect(hex(bytes) == "9481a17801a16181a17802a162")
        #expect(try decoded([Point: String].self, bytes) == value)
    }
}
