import ReactorCore
import ReactorWire
import Testing
@testable import ReactorBus

/// A cancelled job leaves the dispatcher for good: out of the queue, off its worker's slots,
/// never timed out or re-dispatched.
@Suite struct DispatcherCancellationTests {
    let w1 = PeerID([1])
    let w2 = PeerID([2])

    private func job(_ seq: UInt64) -> JobID { JobID(actionSeq: seq, effectIndex: 0) }

    @Test func aQueuedJobIsTakenOutAndNeverAssigned() {
        var dispatcher = Dispatcher()
        #expect(dispatcher.enqueue(job(1), kind: "a", now: 0) == nil)
        #expect(dispatcher.enqueue(job(2), kind: "a", now: 0) == nil)
        let cancelled = dispatcher.cancel(job(1), now: 0)
        #expect(cancelled.queued)
        #expect(cancelled.holders == [])
        #expect(cancelled.assignments == [])
        #expect(dispatcher.queuedCount == 1)
        #expect(dispatcher.register(w1, name: "w1", capacity: 4, kinds: [], now: 0) == [.init(job: job(2), worker: w1)])
    }

    @Test func aRunningJobFreesItsSlotAtOnceAndIsNeverTimedOutOrRedispatched() {
        var dispatcher = Dispatcher(deadAfterMilliseconds: 1_000, jobTimeoutMilliseconds: 500)
        _ = dispatcher.register(w1, name: "w1", capacity: 1, kinds: [], now: 0)
        #expect(dispatcher.enqueue(job(1), kind: "a", now: 0) == .init(job: job(1), worker: w1))
        #expect(dispatcher.enqueue(job(2), kind: "a", now: 0) == nil)
        let cancelled = dispatcher.cancel(job(1), now: 10)
        #expect(!cancelled.queued)
        #expect(cancelled.holders == [w1])
        #expect(cancelled.assignments == [.init(job: job(2), worker: w1)])
        #expect(dispatcher.owner(of: job(1)) == nil)
        // Job 2 times out, then the worker dies: job 1 is in neither.
        let timeout = dispatcher.tick(now: 600)
        #expect(timeout.requeued == [job(2)])
        #expect(timeout.timedOut == 1)
        let death = dispatcher.tick(now: 2_000)
        #expect(death.deadWorkers == [w1])
        #expect(death.requeued == [])
        #expect(dispatcher.queuedCount == 1)
        // A second cancel, or one of an unknown job, finds nothing.
        let again = dispatcher.cancel(job(1), now: 2_000)
        #expect(!again.queued && again.holders.isEmpty && again.assignments.isEmpty)
    }

    @Test func aJobTakenFromASlowWorkerIsCancelledOnBothWorkers() {
        var dispatcher = Dispatcher(deadAfterMilliseconds: 100_000, jobTimeoutMilliseconds: 500, quarantineAfter: 0)
        _ = dispatcher.register(w1, name: "w1", capacity: 1, kinds: [], now: 0)
        #expect(dispatcher.enqueue(job(1), kind: "a", now: 0) == .init(job: job(1), worker: w1))
        _ = dispatcher.register(w2, name: "w2", capacity: 1, kinds: [], now: 0)
        // Timed out on w1 (whose slot stays taken) and handed to w2.
        #expect(dispatcher.tick(now: 600).assignments == [.init(job: job(1), worker: w2)])
        let cancelled = dispatcher.cancel(job(1), now: 700)
        #expect(Set(cancelled.holders) == [w1, w2])
        #expect(dispatcher.trustedCapacity(of: w1) == 1)
        // Both slots are free again.
        #expect(dispatcher.enqueue(job(2), kind: "a", now: 700) != nil)
        #expect(dispatcher.enqueue(job(3), kind: "a", now: 700) != nil)
        #expect(dispatcher.queuedCount == 0)
    }
}
