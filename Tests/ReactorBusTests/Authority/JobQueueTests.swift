import ReactorCore
import ReactorWire
import Testing
@testable import ReactorBus

@Suite struct JobQueueTests {
    private func pending(_ seq: UInt64, _ kind: String = "k") -> JobQueue.Pending {
        JobQueue.Pending(job: JobID(actionSeq: seq, effectIndex: 0), kind: kind, avoid: nil)
    }

    @Test func theDequeMatchesAnArrayUnderMixedOperations() {
        var deque = Deque<Int>()
        var model: [Int] = []
        var generator = SystemRandomNumberGenerator()
        for step in 0..<20_000 {
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                deque.append(step)
                model.append(step)
            case 1:
                deque.prepend(step)
                model.insert(step, at: 0)
            default:
                #expect(deque.popFirst() == (model.isEmpty ? nil : model.removeFirst()))
            }
            #expect(deque.count == model.count)
            #expect(deque.first == model.first)
        }
        #expect(deque.elements == model)
    }

    @Test func jobsComeOutInGlobalOrderAcrossKindsWithPrependsFirst() {
        var queue = JobQueue()
        queue.append(pending(1, "a"))
        queue.append(pending(2, "b"))
        queue.append(pending(3, "a"))
        queue.prepend(contentsOf: [pending(10, "b"), pending(11, "a")])
        queue.prepend(pending(12, "a"))
        #expect(queue.count == 6)
        #expect(queue.all.map(\.job.actionSeq) == [12, 10, 11, 1, 2, 3])
        var order: [UInt64] = []
        while let (next, _) = queue.popFirst(placedBy: { _ in true }) {
            order.append(next.job.actionSeq)
        }
        #expect(order == [12, 10, 11, 1, 2, 3])
        #expect(queue.isEmpty)
    }

    @Test func onlyTheFirstJobOfEachKindIsConsidered() {
        var queue = JobQueue()
        queue.append(pending(1, "a"))
        queue.append(pending(2, "a"))
        queue.append(pending(3, "b"))
        var asked: [UInt64] = []
        let found = queue.popFirst(placedBy: { candidate -> Bool? in
            asked.append(candidate.job.actionSeq)
            return candidate.kind == "b" ? true : nil
        })
        #expect(found?.pending.job.actionSeq == 3)
        #expect(asked.sorted() == [1, 3])
    }

    @Test func poppingThePlacedJobTakesItFromItsKindAndKeepsTheOthersInOrder() {
        var queue = JobQueue()
        queue.append(pending(1, "a"))
        queue.append(pending(2, "b"))
        queue.append(pending(3, "a"))
        queue.append(pending(4, "b"))
        // Only kind "b" has a place: its jobs come out, in order, with the place found.
        var placed: [(UInt64, String)] = []
        while let (next, place) = queue.popFirst(placedBy: { $0.kind == "b" ? "worker-\($0.job.actionSeq)" : nil }) {
            placed.append((next.job.actionSeq, place))
        }
        #expect(placed.map(\.0) == [2, 4])
        #expect(placed.map(\.1) == ["worker-2", "worker-4"])
        #expect(queue.count == 2)
        #expect(queue.all.map(\.job.actionSeq) == [1, 3])
        // Every kind placeable: the global order across kinds, until empty.
        queue.prepend(pending(9, "b"))
        var order: [UInt64] = []
        while let (next, _) = queue.popFirst(placedBy: { _ in true }) { order.append(next.job.actionSeq) }
        #expect(order == [9, 1, 3])
        #expect(queue.isEmpty)
        #expect(queue.popFirst(placedBy: { _ in true }) == nil)
    }

    @Test func aJobsWorkerToAvoidTravelsWithItAndLeavesWithIt() {
        var queue = JobQueue()
        let slow = PeerID([7])
        let taken = JobID(actionSeq: 5, effectIndex: 1)
        queue.append(pending(1, "a"))
        queue.append(JobQueue.Pending(job: taken, kind: "a", avoid: slow))
        #expect(queue.all.map(\.avoid) == [nil, slow])
        var seen: [PeerID?] = []
        while let (next, _) = queue.popFirst(placedBy: { candidate -> Bool? in
            seen.append(candidate.avoid)
            return true
        }) {
            #expect(next.avoid == (next.job == taken ? slow : nil))
        }
        #expect(seen == [nil, slow])
        // Removed while waiting, then queued again without one: nothing of the old one is left.
        queue.append(JobQueue.Pending(job: taken, kind: "b", avoid: slow))
        let removed = queue.remove(taken)
        #expect(removed)
        queue.append(JobQueue.Pending(job: taken, kind: "b", avoid: nil))
        let again = queue.popFirst(placedBy: { $0.avoid == nil ? true : nil })
        #expect(again?.pending.job == taken)
        #expect(queue.isEmpty)
    }
}
