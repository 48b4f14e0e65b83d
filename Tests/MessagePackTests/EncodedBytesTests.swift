import Testing
@testable import MessagePack

/// ``EncodedBytes`` takes over a writer's buffer whole, and reads like the array it replaces.
@Suite struct EncodedBytesTests {
    struct Entry: Codable, Equatable {
        var key: Int
        var name: String
    }

    @Test func takingAWritersBufferKeepsItsBytesAndLeavesTheWriterEmptyAndUsable() {
        let writer = MessagePackWriter()
        writer.packArrayHeader(2)
        writer.packUInt(300)
        writer.packString("state")
        let packed = writer.bytes
        let taken = EncodedBytes(taking: writer)
        #expect(Array(taken) == packed)
        #expect(taken.count == packed.count)
        #expect(writer.count == 0 && writer.capacity == 0)

        // The writer starts a new buffer; the bytes taken do not change.
        writer.packNil()
        #expect(writer.bytes == [0xc0])
        #expect(Array(taken) == packed)
    }

    @Test func anEncodingSharedIsTheEncodingAndDecodesAsTheValue() throws {
        let value = (0 ..< 2_000).map { Entry(key: $0, name: "entry \($0)") }
        let encoder = MessagePackEncoder(sortKeys: false)
        let shared = try encoder.encodeShared(value)
        #expect(Array(shared) == (try encoder.encode(value)))
        #expect(try MessagePackDecoder().decode([Entry].self, from: Array(shared)) == value)
    }

    @Test func copiesOfRangesAreClampedToTheBytesThereAre() {
        let bytes = EncodedBytes([1, 2, 3, 4, 5])
        #expect(bytes.copy(1 ..< 3) == [2, 3])
        #expect(bytes.copy(3 ..< 99) == [4, 5])
        #expect(bytes.copy(5 ..< 5) == [])
        #expect(bytes[4] == 5)
        #expect(Array(bytes[1 ..< 4]) == [2, 3, 4])
    }

    @Test func equalWhenTheirBytesAre() {
        #expect(EncodedBytes([1, 2, 3]) == EncodedBytes([1, 2, 3]))
        #expect(EncodedBytes([1, 2, 3]) != EncodedBytes([1, 2, 4]))
        #expect(EncodedBytes([1, 2]) != EncodedBytes([1, 2, 3]))
        let empty = EncodedBytes([UInt8]())
        #expect(empty.isEmpty && empty == EncodedBytes(MessagePackWriter().bytes))
        #expect(empty.withUnsafeBytes { $0.count } == 0)
    }
}
