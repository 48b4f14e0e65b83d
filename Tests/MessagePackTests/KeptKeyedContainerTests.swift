import Foundation
import Testing
@testable import MessagePack

/// The decoder hands a keyed container out again once nothing but its keeper refers to it
/// (``KeptKeyedContainers``): these check that it does, and that a container a value still
/// holds is never handed to another value.
@Suite struct KeptKeyedContainerTests {
    /// Records the box of each keyed container an element was given (``KeptBoxLog``), and what
    /// it read.
    /// `@unchecked Sendable` restated from ``KeptBoxLog``, whose comment says why it is safe: the
    /// fields added here are touched under the same rules (one test, one thread at a time).
    final class Record: KeptBoxLog, @unchecked Sendable {
        var stashed: [KeyedDecodingContainer<Element.CodingKeys>] = []
        var readBack: [Int] = []
    }

    static let recordKey = CodingUserInfoKey(rawValue: "record")!

    struct Element: Decodable, Equatable {
        var id: Int
        var name: String

        enum CodingKeys: String, CodingKey { case id, name, stash }

        init(id: Int, name: String) {
            self.id = id
            self.name = name
        }

        init(from decoder: any Decoder) throws {
            let record = decoder.userInfo[KeptKeyedContainerTests.recordKey] as? Record
            let container = try decoder.container(keyedBy: CodingKeys.self)
            record?.note(container)
            id = try container.decode(Int.self, forKey: .id)
            // The container kept from the element before must still read that element's map.
            if let earlier = record?.stashed.last {
                record?.readBack.append(try earlier.decode(Int.self, forKey: .id))
            }
            name = try container.decode(String.self, forKey: .name)
            if try container.decodeIfPresent(Bool.self, forKey: .stash) == true {
                record?.stashed.append(container)
            }
        }
    }

    /// `count` elements `{id: i, name: "n<i>"}`, with `stash: true` on those `stash` names.
    func packed(_ count: Int, stash: Set<Int> = []) -> [UInt8] {
        let writer = MessagePackWriter()
        writer.packArrayHeader(count)
        for index in 0 ..< count {
            writer.packMapHeader(stash.contains(index) ? 3 : 2)
            writer.packString("id"); writer.packInt(Int64(index))
            writer.packString("name"); writer.packString("n\(index)")
            if stash.contains(index) { writer.packString("stash"); writer.packBool(true) }
        }
        return writer.bytes
    }

    func decode(_ bytes: [UInt8], record: Record) throws -> [Element] {
        try MessagePackDecoder(userInfo: [Self.recordKey: record]).decode([Element].self, from: bytes)
    }

    @Test func theStandardLibrarysContainerIsOneReferenceHere() {
        // Where it is not, nothing is kept: the other tests would then check only the answers.
        #expect(KeyedContainerLayout.isOneReference)
    }

    @Test func elementsOfAnArrayShareOneContainer() throws {
        let record = Record()
        let elements = try decode(packed(100), record: record)
        #expect(elements == (0 ..< 100).map { Element(id: $0, name: "n\($0)") })
        #expect(record.boxes.count == 100)
        // The first of a key type is not kept (a call that decodes one value keeps nothing); the
        // second is, and every later element gets it again.
        #expect(record.sameAsPrevious == [false] + Array(repeating: true, count: 98))
    }

    @Test func aContainerAnElementKeepsIsNeverHandedToTheNext() throws {
        let record = Record()
        let elements = try decode(packed(6, stash: [1, 3]), record: record)
        #expect(elements.map(\.id) == Array(0 ..< 6))
        #expect(elements.map(\.name) == (0 ..< 6).map { "n\($0)" })
        // Elements 2-5 read the id of the last element that kept its container, through it.
        #expect(record.readBack == [1, 1, 3, 3])
        // 0's box is not kept; 1's is, and 1 keeps it, so 2 gets a new one, which the keeper
        // keeps instead and 3 gets again; 3 keeps that one, so 4 gets a third, which 5 gets
        // again. (Identities are compared only with boxes alive at the time: kept by an element
        // or by the keeper.)
        #expect(record.sameAsPrevious == [false, false, true, false, true])
        #expect(record.boxes[2 ... 5].allSatisfy { $0 != record.boxes[1] })
        #expect(record.boxes[2] == record.boxes[3])
        #expect(record.boxes[4 ... 5].allSatisfy { $0 != record.boxes[3] })
        #expect(record.boxes[4] == record.boxes[5])
    }

    @Test func aFirstContainerAnElementKeepsStaysReadableUntilTheCallEnds() throws {
        // Element 0's container is the first of its key type, which the keeper does not keep:
        // only the call keeps its state (a container refers to it unretained).
        let record = Record()
        let elements = try decode(packed(5, stash: [0]), record: record)
        #expect(elements.map(\.id) == Array(0 ..< 5))
        #expect(record.readBack == [0, 0, 0, 0])
        #expect(record.sameAsPrevious == [false, true, true, true])
    }

    /// Notes, weakly, the decoding context it was decoded with.
    ///
    /// Its statics are `nonisolated(unsafe)`: one test alone uses this type, and its decode calls
    /// run every `init(from:)` synchronously on the calling thread, or on a thread the test joins
    /// (``runOnNewThread(_:)``) before it reads them, so no two threads touch them at once.
    struct NotesContext: Decodable {
        nonisolated(unsafe) static weak var context: DecodingContext?
        nonisolated(unsafe) static var noted = 0
        enum CodingKeys: String, CodingKey { case id }
        init(from decoder: any Decoder) throws {
            Self.context = (decoder as? DecoderImpl)?.context
            if Self.context != nil { Self.noted += 1 }
            _ = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .id)
        }
    }

    /// How many container states `context` keeps for the call it is in.
    func statesKeptForTheCall(by context: DecodingContext) -> Int? {
        (Mirror(reflecting: context).children.first { $0.label == "callStates" }?.value as? [KeyedDecodingState])?.count
    }

    @Test func theStatesOfACallAreReleasedWhenItEnds() throws {
        // A call with `userInfo` has a context of its own: its states (which refer back to it)
        // are released with it, so nothing keeps it.
        _ = try MessagePackDecoder(userInfo: [Self.recordKey: Record()]).decode([NotesContext].self, from: packedIDs([1, 2, 3]))
        #expect(NotesContext.noted == 3)
        #expect(NotesContext.context == nil, "the call's context outlived it")
        // A call without takes its thread's kept context, which holds its states only until
        // the call ends.
        var decodedCount = 0, keptAfterTheCall: Int?
        runOnNewThread {
            decodedCount = (try? MessagePackDecoder().decode([NotesContext].self, from: packedIDs([4, 5, 6])))?.count ?? 0
            keptAfterTheCall = NotesContext.context.flatMap(statesKeptForTheCall(by:))
        }
        #expect(decodedCount == 3)
        #expect(keptAfterTheCall == 0)
    }

    /// Nested values of one key type: the outer container is in use while the inner ones decode.
    struct Tree: Codable, Equatable {
        var value: Int
        var children: [Tree]
    }

    @Test func nestedValuesOfOneKeyTypeEachReadTheirOwnMap() throws {
        let tree = Tree(value: 1, children: [
            Tree(value: 2, children: [Tree(value: 3, children: []), Tree(value: 4, children: [])]),
            Tree(value: 5, children: [Tree(value: 6, children: [Tree(value: 7, children: [])])]),
        ])
        let bytes = try MessagePackEncoder().encode(tree)
        #expect(try MessagePackDecoder().decode(Tree.self, from: bytes) == tree)
        #expect(try MessagePackDecoder().decode([Tree].self, from: MessagePackEncoder().encode([tree, tree])) == [tree, tree])
    }

    /// A value that asks for its container twice and reads through both.
    struct Twice: Decodable, Equatable {
        var id: Int
        var name: String
        enum CodingKeys: String, CodingKey { case id, name }

        init(id: Int, name: String) {
            self.id = id
            self.name = name
        }

        init(from decoder: any Decoder) throws {
            let first = try decoder.container(keyedBy: CodingKeys.self)
            let second = try decoder.container(keyedBy: CodingKeys.self)
            name = try second.decode(String.self, forKey: .name)
            id = try first.decode(Int.self, forKey: .id)
        }
    }

    @Test func aValueAskingTwiceGetsTwoWorkingContainers() throws {
        let writer = MessagePackWriter()
        writer.packArrayHeader(3)
        for index in 0 ..< 3 {
            writer.packMapHeader(2)
            writer.packString("id"); writer.packInt(Int64(index * 10))
            writer.packString("name"); writer.packString("t\(index)")
        }
        #expect(try MessagePackDecoder().decode([Twice].self, from: writer.bytes) == [
            Twice(id: 0, name: "t0"), Twice(id: 10, name: "t1"), Twice(id: 20, name: "t2"),
        ])
    }

    @Test func aReusedContainerReportsTheNewValuesPathAndKeys() throws {
        // The second element is missing "name": its error must name index 1, not index 0.
        let writer = MessagePackWriter()
        writer.packArrayHeader(2)
        writer.packMapHeader(2); writer.packString("id"); writer.packInt(0); writer.packString("name"); writer.packString("a")
        writer.packMapHeader(1); writer.packString("id"); writer.packInt(1)
        let error = try #require(decodingError { _ = try MessagePackDecoder().decode([Element].self, from: writer.bytes) })
        #expect(error.kind == .keyNotFound)
        #expect(error.path == ["[1]"])
    }

    // A call without `userInfo` takes the context its thread keeps between calls (``ThreadKept``).

    struct Probed: Decodable, Equatable {
        @TaskLocal static var probe: KeptBoxLog?
        var id: Int
        enum CodingKeys: String, CodingKey { case id }
        init(id: Int) { self.id = id }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            Self.probe?.note(container)
            id = try container.decode(Int.self, forKey: .id)
        }
    }

    func packedIDs(_ ids: [Int]) -> [UInt8] {
        let writer = MessagePackWriter()
        writer.packArrayHeader(ids.count)
        for id in ids {
            writer.packMapHeader(1)
            writer.packString("id"); writer.packInt(Int64(id))
        }
        return writer.bytes
    }

    /// A value of its own key type per tag.
    struct Tagged<Tag>: Decodable { var id: Int }
    enum T0 {}; enum T1 {}; enum T2 {}; enum T3 {}; enum T4 {}
    enum T5 {}; enum T6 {}; enum T7 {}; enum T8 {}; enum T9 {}

    @Test func aThreadsKeptContextHandsItsContainerToTheNextCall() {
        // On a thread of its own, so that its kept context is this test's alone.
        let probe = KeptBoxLog()
        var first: [Probed] = [], second: Probed?, third: [Probed] = [], taggedDecoded = 0
        let single = (try? MessagePackEncoder().encode(["id": 4])) ?? []
        runOnNewThread {
            Probed.$probe.withValue(probe) {
                let decoder = MessagePackDecoder()
                first = (try? decoder.decode([Probed].self, from: packedIDs([1, 2, 3]))) ?? []
                second = try? decoder.decode(Probed.self, from: single)
                // More key types than the keeper holds at once, each kept in turn ...
                let two = packedIDs([8, 9])
                let types: [any Decodable.Type] = [Tagged<T0>.self, Tagged<T1>.self, Tagged<T2>.self, Tagged<T3>.self, Tagged<T4>.self,
                                                   Tagged<T5>.self, Tagged<T6>.self, Tagged<T7>.self, Tagged<T8>.self, Tagged<T9>.self]
                for type in types { taggedDecoded += decodedCount(type, from: two, with: decoder) }
                // ... and the one met before them, met again: kept again, and handed out again.
                third = (try? decoder.decode([Probed].self, from: packedIDs([5, 6, 7]))) ?? []
            }
        }
        #expect(first == [1, 2, 3].map(Probed.init))
        #expect(second == Probed(id: 4))
        #expect(third == [5, 6, 7].map(Probed.init))
        #expect(taggedDecoded == 20)
        #expect(probe.boxes.count == 7)
        // The first element's container is not kept, the second's is and the third gets it again;
        // so does the next call's value. After ten other key types, the last call's first element
        // gets a new container (its key type's entry was replaced), which is kept again.
        #expect(probe.sameAsPrevious == [false, true, true, false, true, true])
        #expect(probe.allFreed, "the context of an exited thread kept its containers")
    }

    /// How many `T`s an array in `bytes` decodes to (0 when it does not).
    func decodedCount<T: Decodable>(_ type: T.Type, from bytes: [UInt8], with decoder: MessagePackDecoder) -> Int {
        (try? decoder.decode([T].self, from: bytes))?.count ?? 0
    }

    @Test func aThreadsKeptContextIsFreedWhenTheThreadExits() {
        let probe = KeptBoxLog()
        var decoded: [Probed] = []
        let bytes = packedIDs([5, 6, 7])
        runOnNewThread {
            Probed.$probe.withValue(probe) {
                decoded = (try? MessagePackDecoder().decode([Probed].self, from: bytes)) ?? []
            }
        }
        #expect(decoded == [5, 6, 7].map(Probed.init))
        #expect(probe.boxes.count == 3)
        #expect(probe.allFreed, "the context of an exited thread kept its containers")
    }

    /// Nested values of one key type read after their children: the outer container is used
    /// again once the children's containers were made (and kept in its place).
    struct Branch: Codable, Equatable {
        var children: [Branch]
        var value: Int
    }

    @Test func aThreadsKeptContextReadsNestedValuesOfOneKeyTypeCallAfterCall() throws {
        // The second call is handed the container the first one kept; the children need one of
        // the same key type meanwhile, so a new one is kept in its place, and the handed-out
        // one's state (which it refers to unretained) must stay until the call ends.
        let tree = Branch(children: [
            Branch(children: [Branch(children: [], value: 3), Branch(children: [], value: 4)], value: 2),
            Branch(children: [Branch(children: [Branch(children: [], value: 7)], value: 6)], value: 5),
        ], value: 1)
        let bytes = try MessagePackEncoder().encode([tree, tree])
        var decoded: [[Branch]] = []
        runOnNewThread {
            for _ in 0 ..< 4 { decoded.append((try? MessagePackDecoder().decode([Branch].self, from: bytes)) ?? []) }
        }
        #expect(decoded == Array(repeating: [tree, tree], count: 4))
    }

    /// A value whose `init(from:)` decodes other bytes meanwhile: both read what they would alone.
    struct Reentrant: Decodable, Equatable {
        var outer: Int
        var inner: [Element]
        enum CodingKeys: String, CodingKey { case outer, inner }
        init(outer: Int, inner: [Element]) {
            self.outer = outer
            self.inner = inner
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let bytes = try container.decode([UInt8].self, forKey: .inner)
            inner = try MessagePackDecoder().decode([Element].self, from: bytes)
            outer = try container.decode(Int.self, forKey: .outer)
        }
    }

    @Test func aDecodeInsideADecodeReadsItsOwnBytes() throws {
        let writer = MessagePackWriter()
        writer.packArrayHeader(2)
        for outer in [10, 20] {
            writer.packMapHeader(2)
            writer.packString("inner"); writer.packBinary(packed(3))
            writer.packString("outer"); writer.packInt(Int64(outer))
        }
        let elements = (0 ..< 3).map { Element(id: $0, name: "n\($0)") }
        #expect(try MessagePackDecoder().decode([Reentrant].self, from: writer.bytes)
            == [Reentrant(outer: 10, inner: elements), Reentrant(outer: 20, inner: elements)])
    }
}
