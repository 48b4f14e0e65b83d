import Testing
@testable import ReactorBus

@Suite struct CommitQueueTests {
    @Test func turnsLeaveInOrderOnceTheirLSNIsDurable() {
        var queue = CommitQueue<String>()
        queue.hold("a", until: 10)
        queue.hold("b", until: 12)
        queue.hold("c", until: 12)
        queue.hold("d", until: 15)
        #expect(queue.release(durableThrough: 9) == [])
        #expect(queue.release(durableThrough: 12) == ["a", "b", "c"])
        #expect(queue.count == 1)
        #expect(queue.release(durableThrough: 20) == ["d"])
        #expect(queue.isEmpty)
    }

    @Test func nothingOvertakesAnOlderTurnThatStillWaits() {
        var queue = CommitQueue<String>()
        queue.hold("journaled", until: 8)
        // A turn without records waits for the journal's end at its turn: behind the older one.
        queue.hold("no records", until: 8)
        #expect(queue.release(durableThrough: 7) == [])
        #expect(queue.release(durableThrough: 8) == ["journaled", "no records"])
    }

    @Test func removeAllTakesEverythingOldestFirst() {
        var queue = CommitQueue<Int>()
        for n in 1...3 { queue.hold(n, until: UInt64(n)) }
        #expect(queue.removeAll() == [1, 2, 3])
        #expect(queue.isEmpty)
    }
}
