@testable import ReactorBus
import Testing

/// Entries join their peer's open batch, in runs and interleaved alike; a closed or full batch
/// is followed by a new one at the next slot; draining hands the batches over in the order they
/// were opened and leaves nothing open.
@Suite struct TurnBatchesTests {
    /// Adds each `(peer, entry)` with one byte each, at the slot after the batches opened so far;
    /// closes a peer where the entry is `nil`. Returns the batches as `peer: entries`, in order.
    private func batches(_ steps: [(String, Int?)], limit: Int = 100) -> [String] {
        var turn = TurnBatches<String, Int>()
        var slots = 0
        for (peer, entry) in steps {
            guard let entry else {
                turn.close(peer)
                continue
            }
            if turn.add(entry, bytes: 1, for: peer, slot: slots, headerBytes: 0, limit: limit) { slots += 1 }
        }
        var drained: [String] = []
        var expectedSlot = 0
        turn.drain { batch in
            #expect(batch.slot == expectedSlot)
            expectedSlot += 1
            drained.append("\(batch.key): \(batch.entries.map(String.init).joined(separator: ","))")
        }
        #expect(drained.count == slots)
        #expect(turn.isEmpty)
        return drained
    }

    @Test func aRunForOnePeerIsOneBatch() {
        #expect(batches([("a", 1), ("a", 2), ("a", 3)]) == ["a: 1,2,3"])
    }

    @Test func interleavedPeersEachKeepTheirOwnBatch() {
        #expect(batches([("a", 1), ("b", 2), ("a", 3), ("b", 4), ("c", 5), ("a", 6)]) == ["a: 1,3,6", "b: 2,4", "c: 5"])
    }

    @Test func aClosedBatchIsFollowedByANewOneWhetherItsPeerWasTheLastOrNot() {
        // Closing the last entry's peer, and closing a peer whose batch another peer's entry followed.
        #expect(batches([("a", 1), ("a", nil), ("a", 2), ("b", 3), ("a", nil), ("b", 4), ("a", 5)]) == ["a: 1", "a: 2", "b: 3,4", "a: 5"])
        // Closing a peer with nothing open changes nothing.
        #expect(batches([("a", 1), ("z", nil), ("a", 2)]) == ["a: 1,2"])
        // A batch reopened after a close, then left and come back to, is still the one joined.
        #expect(batches([("a", 1), ("b", 2), ("a", nil), ("a", 3), ("b", 4), ("a", 5)]) == ["a: 1", "b: 2,4", "a: 3,5"])
    }

    @Test func aFullBatchIsFollowedByANewOneThatLaterEntriesJoin() {
        // Limit 2: a peer's third entry opens its second batch, also when another peer came between.
        #expect(batches([("a", 1), ("a", 2), ("a", 3), ("b", 4), ("a", 5), ("a", 6)], limit: 2) == ["a: 1,2", "a: 3,5", "b: 4", "a: 6"])
        #expect(batches([("a", 1), ("b", 2), ("a", 3), ("b", 4), ("a", 5), ("b", 6), ("a", 7)], limit: 2) == ["a: 1,3", "b: 2,4", "a: 5,7", "b: 6"])
    }

    @Test func aDrainedTurnStartsAfresh() {
        var turn = TurnBatches<String, Int>()
        var opened: [Bool] = []
        for (entry, peer) in [(1, "a"), (2, "a"), (3, "b")] {
            opened.append(turn.add(entry, bytes: 1, for: peer, slot: opened.count(where: \.self), headerBytes: 0, limit: 10))
        }
        #expect(opened == [true, false, true])
        var first: [[Int]] = []
        turn.drain { first.append($0.entries) }
        #expect(first == [[1, 2], [3]])
        // Neither peer's old batch is joined after the drain.
        opened = []
        for (entry, peer) in [(4, "b"), (5, "a")] {
            opened.append(turn.add(entry, bytes: 1, for: peer, slot: opened.count(where: \.self), headerBytes: 0, limit: 10))
        }
        #expect(opened == [true, true])
        var second: [(String, [Int])] = []
        turn.drain { second.append(($0.key, $0.entries)) }
        #expect(second.map(\.0) == ["b", "a"] && second.map(\.1) == [[4], [5]])
    }
}
