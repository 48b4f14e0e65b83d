import Foundation
import Testing
@testable import MessagePack

/// The encoder hands a keyed container out again once nothing but its keeper refers to it
/// (``KeptKeyedContainers`` with ``KeyedEncodingState``): these check that it does, that the bytes
/// are those of a container made anew each time, and that a container a value still holds is
/// never handed to another value.
@Suite struct KeptKeyedEncodingContainerTests {
    /// Records the box of each keyed container an element was given (``KeptBoxLog``), and the
    /// containers elements kept.
    /// `@unchecked Sendable` restated from ``KeptBoxLog``, whose comment says why it is safe: the
    /// fields added here are touched under the same rules (one test, one thread at a time).
    final class Record: KeptBoxLog, @unchecked Sendable {
        var stashed: [KeyedEncodingContainer<Element.CodingKeys>] = []
    }

    static let recordKey = CodingUserInfoKey(rawValue: "record")!

    struct Element: Encodable, Equatable {
        var id: Int
        var name: String
        var stash = false

        enum CodingKeys: String, CodingKey { case id, name, stash }

        func encode(to encoder: any Encoder) throws {
            let record = encoder.userInfo[KeptKeyedEncodingContainerTests.recordKey] as? Record
            var container = encoder.container(keyedBy: CodingKeys.self)
            record?.note(container)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            if stash {
                try container.encode(true, forKey: .stash)
                record?.stashed.append(container)
            }
        }
    }

    /// What a container made anew for each element writes: `{id, name[, stash: true]}` each.
    func expected(_ elements: [Element]) -> [UInt8] {
        let writer = MessagePackWriter()
        writer.packArrayHeader(elements.count)
        for element in elements {
            writer.packMapHeader(element.stash ? 3 : 2)
            writer.packString("id"); writer.packInt(Int64(element.id))
            writer.packString("name"); writer.packString(element.name)
            if element.stash { writer.packString("stash"); writer.packBool(true) }
        }
        return writer.bytes
    }

    func encode(_ elements: [Element], record: Record) throws -> [UInt8] {
        try MessagePackEncoder(userInfo: [Self.recordKey: record]).encode(elements)
    }

    @Test func theStandardLibrarysContainerIsOneReferenceHere() {
        // Where it is not, nothing is kept: the other tests would then check only the bytes.
        #expect(KeyedContainerLayout.encodingIsOneReference)
    }

    @Test func elementsOfAnArrayShareOneContainer() throws {
        let record = Record()
        let elements = (0 ..< 100).map { Element(id: $0, name: "n\($0)") }
        #expect(try encode(elements, record: record) == expected(elements))
        #expect(record.boxes.count == 100)
        // The first of a key type is not kept (a call that encodes one value keeps nothing); the
        // second is, and every later element gets it again.
        #expect(record.sameAsPrevious == [false] + Array(repeating: true, count: 98))
    }

    @Test func aContainerAnElementKeepsIsNeverHandedToTheNext() throws {
        let record = Record()
        let elements = (0 ..< 6).map { Element(id: $0, name: "n\($0)", stash: $0 == 1 || $0 == 3) }
        #expect(try encode(elements, record: record) == expected(elements))
        // 0's box is not kept; 1's is, and 1 keeps it, so 2 gets a new one, which the keeper
        // keeps instead and 3 gets again; 3 keeps that one, so 4 gets a third, which 5 gets again.
        #expect(record.sameAsPrevious == [false, false, true, false, true])
        #expect(record.boxes[2 ... 5].allSatisfy { $0 != record.boxes[1] })
        #expect(record.boxes[2] == record.boxes[3])
        #expect(record.boxes[4 ... 5].allSatisfy { $0 != record.boxes[3] })
        #expect(record.boxes[4] == record.boxes[5])
        #expect(record.stashed.count == 2)
    }

    /// Nested values of one key type: the outer container is in use while the inner ones encode.
    struct Tree: Codable, Equatable {
        var value: Int
        var children: [Tree]
    }

    @Test func nestedValuesOfOneKeyTypeEachWriteTheirOwnMap() throws {
        let tree = Tree(value: 1, children: [
            Tree(value: 2, children: [Tree(value: 3, children: []), Tree(value: 4, children: [])]),
            Tree(value: 5, children: [Tree(value: 6, children: [Tree(value: 7, children: [])])]),
        ])
        let bytes = try MessagePackEncoder().encode(tree)
        #expect(try MessagePackValue(unpacking: bytes).jsonText(sortedKeys: false)
            == #"{"value":1,"children":[{"value":2,"children":[{"value":3,"children":[]},{"value":4,"children":[]}]},{"value":5,"children":[{"value":6,"children":[{"value":7,"children":[]}]}]}]}"#)
        #expect(try MessagePackDecoder().decode(Tree.self, from: bytes) == tree)
        #expect(try MessagePackDecoder().decode([Tree].self, from: MessagePackEncoder().encode([tree, tree])) == [tree, tree])
    }

    /// A value that asks for its container twice and writes through both.
    struct Twice: Encodable {
        var id: Int
        var name: String
        enum CodingKeys: String, CodingKey { case id, name }

        func encode(to encoder: any Encoder) throws {
            var first = encoder.container(keyedBy: CodingKeys.self)
            var second = encoder.container(keyedBy: CodingKeys.self)
            try second.encode(name, forKey: .name)
            try first.encode(id, forKey: .id)
        }
    }

    @Test func aValueAskingTwiceGetsTwoWorkingContainers() throws {
        let writer = MessagePackWriter()
        writer.packArrayHeader(3)
        for index in 0 ..< 3 {
            writer.packMapHeader(2)
            writer.packString("name"); writer.packString("t\(index)")
            writer.packString("id"); writer.packInt(Int64(index * 10))
        }
        #expect(try MessagePackEncoder().encode((0 ..< 3).map { Twice(id: $0 * 10, name: "t\($0)") }) == writer.bytes)
    }

    /// A value whose encoding fails half-way leaves nothing of itself, and the next call (with a
    /// container kept from before the failure) writes whole values again.
    struct Failing: Encodable {
        var id: Int
        struct Refused: Error {}
        enum CodingKeys: String, CodingKey { case id, more }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            if id == 3 { throw Refused() }
            try container.encode(id + 1, forKey: .more)
        }
    }

    @Test func aFailedValueLeavesTheKeptContainerUsable() throws {
        let encoder = MessagePackEncoder()
        #expect(throws: Failing.Refused.self) { try encoder.encode((0 ..< 5).map(Failing.init)) }
        let writer = MessagePackWriter()
        writer.packArrayHeader(3)
        for id in [4, 5, 6] {
            writer.packMapHeader(2)
            writer.packString("id"); writer.packInt(Int64(id))
            writer.packString("more"); writer.packInt(Int64(id + 1))
        }
        #expect(try encoder.encode([4, 5, 6].map(Failing.init)) == writer.bytes)
    }
}
