@testable import ReactorBus
import ReactorCore
import Testing

/// The worker's prefetch queue: oldest first, removal from the middle without a scan, and a job
/// sent again moves to the back.
struct WorkerJobQueueTests {
    private func entry(_ seq: UInt64, payload: [UInt8] = []) -> WorkerQueuedJob {
        WorkerQueuedJob(job: JobID(actionSeq: seq, effectIndex: 0), kind: "k", payload: payload)
    }

    private func drain(_ queue: inout WorkerJobQueue) -> [UInt64] {
        var order: [UInt64] = []
        while let next = queue.popFirst() { order.append(next.job.actionSeq) }
        return order
    }

    @Test func popsOldestFirstAndSkipsJobsTakenOutOfTheMiddle() {
        var queue = WorkerJobQueue()
        for seq in UInt64(1)...5 { queue.append(entry(seq)) }
        #expect(queue.count == 5)
        let removedTwo = queue.remove(JobID(actionSeq: 2, effectIndex: 0))
        let removedFour = queue.remove(JobID(actionSeq: 4, effectIndex: 0))
        let removedFourAgain = queue.remove(JobID(actionSeq: 4, effectIndex: 0))
        #expect(removedTwo && removedFour && !removedFourAgain)
        #expect(!queue.contains(JobID(actionSeq: 2, effectIndex: 0)) && queue.contains(JobID(actionSeq: 3, effectIndex: 0)))
        #expect(queue.count == 3)
        #expect(drain(&queue) == [1, 3, 5])
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
    }

    @Test func aJobAddedAgainMovesToTheBackWithItsNewPayload() {
        var queue = WorkerJobQueue()
        queue.append(entry(1, payload: [1]))
        queue.append(entry(2))
        queue.append(entry(1, payload: [9]))
        #expect(queue.count == 2)
        #expect(queue.popFirst()?.job.actionSeq == 2)
        let last = queue.popFirst()
        #expect(last?.job.actionSeq == 1 && last?.payload == [9])
        #expect(queue.popFirst() == nil)
    }

    @Test func removedJobsDoNotPileUpWhileNothingIsPopped() {
        var queue = WorkerJobQueue()
        // Jobs come and are cancelled while no slot frees: 10,000 in, all but the last 10 out.
        for seq in 1...10_000 {
            queue.append(entry(UInt64(seq)))
            if seq > 10 { queue.remove(JobID(actionSeq: UInt64(seq - 10), effectIndex: 0)) }
        }
        #expect(queue.count == 10)
        #expect(queue.bookkeepingCount <= 2 * 10 + 64 + 1)
        #expect(drain(&queue) == Array(9_991...10_000))
    }

    @Test func removeAllSaysHowManyWaitedAndEmptiesTheQueue() {
        var queue = WorkerJobQueue()
        for seq in UInt64(1)...3 { queue.append(entry(seq)) }
        queue.remove(JobID(actionSeq: 1, effectIndex: 0))
        let removed = queue.removeAll()
        #expect(removed == 2)
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
        queue.append(entry(7))
        #expect(drain(&queue) == [7])
    }
}
