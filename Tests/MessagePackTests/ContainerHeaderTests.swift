import Testing
@testable import MessagePack

/// The encoder writes a container straight into the enclosing buffer and fixes its header once
/// the count is known: every header length (fix, 16-bit, 32-bit) and a nested container spliced
/// in before a widened one must come out as msgpack-c packs them.
@Suite struct ContainerHeaderTests {
    /// `count` entries `"k<i>": i` in a keyed container, or elements `i` in an unkeyed one.
    struct Entries: Encodable {
        let count: Int
        let keyed: Bool

        func encode(to encoder: any Encoder) throws {
            if keyed {
                var container = encoder.container(keyedBy: MessagePackKey.self)
                for index in 0 ..< count { try container.encode(index, forKey: .string("k\(index)")) }
            } else {
                var container = encoder.unkeyedContainer()
                for index in 0 ..< count { try container.encode(index) }
            }
        }
    }

    /// `{"early": [1, 2, 3], "big": <entries>, "after": true}`, with "early" opened before
    /// "big" is written and filled after it.
    struct AroundWidened: Encodable {
        let entries: Entries

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: MessagePackKey.self)
            var early = container.nestedUnkeyedContainer(forKey: .string("early"))
            try container.encode(entries, forKey: .string("big"))
            for value in 1 ... 3 { try early.encode(value) }
            try container.encode(true, forKey: .string("after"))
        }
    }

    /// The bytes msgpack-c packs for `Entries` through the writer alone.
    func expected(_ entries: Entries, into writer: MessagePackWriter) {
        if entries.keyed {
            writer.packMapHeader(entries.count)
            for index in 0 ..< entries.count {
                writer.packString("k\(index)")
                writer.packInt(Int64(index))
            }
        } else {
            writer.packArrayHeader(entries.count)
            for index in 0 ..< entries.count { writer.packInt(Int64(index)) }
        }
    }

    @Test(arguments: [0, 1, 15, 16, 17, 65_535, 65_536], [true, false])
    func everyHeaderLengthMatchesMsgpackC(count: Int, keyed: Bool) throws {
        let entries = Entries(count: count, keyed: keyed)
        let writer = MessagePackWriter()
        expected(entries, into: writer)
        #expect(try MessagePackEncoder().encode(entries) == writer.bytes)
    }

    @Test(arguments: [3, 16, 65_536])
    func aNestedContainerBeforeAWidenedHeaderKeepsItsPlace(count: Int) throws {
        let value = AroundWidened(entries: Entries(count: count, keyed: true))
        let writer = MessagePackWriter()
        writer.packMapHeader(3)
        writer.packString("early")
        writer.packArrayHeader(3)
        for element in 1 ... 3 { writer.packInt(Int64(element)) }
        writer.packString("big")
        expected(value.entries, into: writer)
        writer.packString("after")
        writer.packBool(true)
        #expect(try MessagePackEncoder().encode(value) == writer.bytes)
    }

    /// Writes two entries, then fails.
    struct FailsMidway: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: MessagePackKey.self)
            try container.encode(1, forKey: .string("a"))
            try container.encode(2, forKey: .string("b"))
            throw EncodingError.invalidValue(2, .init(codingPath: [], debugDescription: "refused"))
        }
    }

    @Test func aFailedEncodeLeavesTheWriterAsItWas() throws {
        let writer = MessagePackWriter()
        try MessagePackEncoder().encode("before", into: writer)
        let before = writer.bytes
        #expect(throws: EncodingError.self) { try MessagePackEncoder().encode(FailsMidway(), into: writer) }
        #expect(writer.bytes == before)
        try MessagePackEncoder().encode(1, into: writer)
        #expect(writer.bytes == before + [0x01])
    }
}
