import Testing
@testable import MessagePack

/// Encodes on a thread reuse that thread's writers: a kept writer comes back empty, a large or
/// surplus one is not kept, and encodes one after another, nested in another's `encode(to:)` or
/// on many threads at once each produce exactly their own bytes.
@Suite struct ThreadWriterPoolTests {
    /// Runs `body` with this thread's pool emptied (other tests' encodes on the thread leave
    /// writers in it), then gives the writers back.
    private func withEmptyPool(_ body: () throws -> Void) rethrows {
        let held = (0 ..< ThreadWriterPool.maxSpare).map { _ in ThreadWriterPool.acquire() }
        defer { held.forEach(ThreadWriterPool.keep) }
        try body()
    }

    @Test func aKeptWriterComesBackEmptied() {
        withEmptyPool {
            let writer = ThreadWriterPool.acquire()
            writer.packString("left over from the last encode")
            ThreadWriterPool.keep(writer)
            let again = ThreadWriterPool.acquire()
            #expect(again === writer)
            #expect(again.count == 0)
            #expect(again.capacity > 0)
        }
    }

    @Test func aWriterGrownPastTheBoundIsNotKept() {
        withEmptyPool {
            let writer = ThreadWriterPool.acquire()
            writer.packBinary([UInt8](repeating: 7, count: ThreadWriterPool.maxKeptCapacity + 1))
            #expect(writer.capacity > ThreadWriterPool.maxKeptCapacity)
            ThreadWriterPool.keep(writer)
            let next = ThreadWriterPool.acquire()
            #expect(next !== writer)
            #expect(next.capacity == 0)
        }
    }

    @Test func atMostTheBoundOfWritersIsKept() {
        withEmptyPool {
            let writers = (0 ... ThreadWriterPool.maxSpare).map { _ in MessagePackWriter() }
            writers.forEach(ThreadWriterPool.keep)
            let taken = (0 ... ThreadWriterPool.maxSpare).map { _ in ThreadWriterPool.acquire() }
            let reused = taken.filter { candidate in writers.contains { $0 === candidate } }
            #expect(reused.count == ThreadWriterPool.maxSpare)
            // The one past the bound was dropped: the last one taken is a new writer.
            #expect(!writers.contains { $0 === taken.last })
        }
    }

    @Test func encodesOneAfterAnotherEachWriteTheirOwnBytes() throws {
        // Nested containers take writers from the pool, and a large value grows one past the
        // bound; each encode must still produce exactly what a fresh writer would.
        let values: [[String: [String]]] = [
            ["first": ["a"]], ["large": (0 ..< 20_000).map { "entry \($0)" }], [:], ["after": ["b", "c"]], ["last": []],
        ]
        for value in values {
            let bytes = try MessagePackEncoder().encode(value)
            let fresh = MessagePackWriter()
            try MessagePackEncoder().encode(value, into: fresh)
            #expect(bytes == fresh.bytes)
            #expect(try MessagePackDecoder().decode([String: [String]].self, from: bytes) == value)
        }
    }

    @Test func encodesOnManyThreadsAtOnceEachWriteTheirOwnValue() async throws {
        let mismatches = await withTaskGroup(of: Int.self, returning: Int.self) { group in
            for index in 0 ..< 64 {
                group.addTask {
                    var wrong = 0
                    for _ in 0 ..< 200 {
                        let value = ["index": [index], "square": [index * index]]
                        let bytes = try? MessagePackEncoder().encode(value)
                        if bytes.flatMap({ try? MessagePackDecoder().decode([String: [Int]].self, from: $0) }) != value { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
