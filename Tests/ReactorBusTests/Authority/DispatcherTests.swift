import ReactorCore
import Testing
@testable import ReactorBus

@Suite struct DispatcherTests {
    let w1 = PeerID([1])
    let w2 = PeerID([2])
    private func job(_ seq: UInt64) -> JobID { JobID(actionSeq: seq, effectIndex: 0) }

    @Test func jobsWaitForAWorkerAndRespectCapacity() {
        var dispatcher = Dispatcher()
        #expect(dispatcher.enqueue(job(1), kind: "k", now: 0) == nil)
        #expect(dispatcher.enqueue(job(2), kind: "k", now: 0) == nil)
        #expect(dispatcher.enqueue(job(3), kind: "k", now: 0) == nil)
        let assigned = dispatcher.register(w1, name: "one", capacity: 2, kinds: [], now: 1)
        #expect(assigned == [.init(job: job(1), worker: w1), .init(job: job(2), worker: w1)])
        #expect(dispatcher.queuedCount == 1)
        let freed = dispatcher.finished(job(1), by: w1, now: 2)
        #expect(freed.owned)
        #expect(freed.assignments == [.init(job: job(3), worker: w1)])
        #expect(dispatcher.queuedCount == 0)
    }

    @Test func onlyWorkersServingAKindGetItsJobs() {
        var dispatcher = Dispatcher()
        _ = dispatcher.register(w1, name: "one", capacity: 4, kinds: ["a"], now: 0)
        #expect(dispatcher.enqueue(job(1), kind: "b", now: 0) == nil)
        #expect(dispatcher.enqueue(job(2), kind: "a", now: 0) == .init(job: job(2), worker: w1))
        #expect(dispatcher.queuedKind(of: job(1)) == "b")
        let assigned = dispatcher.register(w2, name: "two", capacity: 4, kinds: ["b"], now: 0)
        #expect(assigned == [.init(job: job(1), worker: w2)])
        #expect(dispatcher.queuedKind(of: job(1)) == "b")
        _ = dispatcher.finished(job(1), by: w2, now: 1)
        #expect(dispatcher.queuedKind(of: job(1)) == nil)
    }

    @Test func theLeastBusyWorkerGetsTheNextJob() {
        var dispatcher = Dispatcher()
        _ = dispatcher.register(w1, name: "one", capacity: 4, kinds: [], now: 0)
        _ = dispatcher.register(w2, name: "two", capacity: 4, kinds: [], now: 0)
        let first = dispatcher.enqueue(job(1), kind: "k", now: 0)
        let second = dispatcher.enqueue(job(2), kind: "k", now: 0)
        #expect(Set([first?.worker, second?.worker]) == Set([w1, w2]))
    }

    @Test func aSilentWorkerIsDeadAndItsJobsGoElsewhere() {
        var dispatcher = Dispatcher(deadAfterMilliseconds: 3_000)
        _ = dispatcher.register(w1, name: "one", capacity: 1, kinds: [], now: 0)
        _ = dispatcher.enqueue(job(1), kind: "k", now: 0)
        _ = dispatcher.register(w2, name: "two", capacity: 1, kinds: [], now: 0)
        dispatcher.heard(from: w2, now: 2_500)
        #expect(dispatcher.tick(now: 2_999) == Dispatcher.Expiry())
        let expiry = dispatcher.tick(now: 3_000)
        #expect(expiry.deadWorkers == [w1])
        #expect(expiry.requeued == [job(1)])
        #expect(expiry.assignments == [.init(job: job(1), worker: w2)])
        #expect(!dispatcher.knows(w1))
        // The dead worker's late DONE is not its to report any more.
        #expect(dispatcher.finished(job(1), by: w1, now: 3_001).owned == false)
        #expect(dispatcher.isOwner(w2, of: job(1)))
    }

    @Test func aJobThatRunsTooLongGoesToAnotherWorkerAndTheSlowSlotStaysTaken() {
        var dispatcher = Dispatcher(deadAfterMilliseconds: 100_000, jobTimeoutMilliseconds: 1_000)
        _ = dispatcher.register(w1, name: "one", capacity: 1, kinds: [], now: 0)
        _ = dispatcher.enqueue(job(1), kind: "k", now: 0)
        _ = dispatcher.register(w2, name: "two", capacity: 1, kinds: [], now: 10)
        let expiry = dispatcher.tick(now: 1_000)
        #expect(expiry.requeued == [job(1)])
        #expect(expiry.assignments == [.init(job: job(1), worker: w2)])
        // w1 still runs the hung effect: no new job for it until it reports.
        #expect(dispatcher.enqueue(job(2), kind: "k", now: 1_001) == nil)
        let late = dispatcher.finished(job(1), by: w1, now: 1_002)
        #expect(late.owned == false)
        #expect(late.assignments == [.init(job: job(2), worker: w1)])
    }

    @Test func aWorkerThatAnnouncesItselfAgainGetsItsJobsBackFresh() {
        var dispatcher = Dispatcher()
        _ = dispatcher.register(w1, name: "one", capacity: 2, kinds: [], now: 0)
        _ = dispatcher.enqueue(job(1), kind: "k", now: 0)
        let again = dispatcher.register(w1, name: "one", capacity: 2, kinds: [], now: 5)
        #expect(again == [.init(job: job(1), worker: w1)])
        #expect(dispatcher.isOwner(w1, of: job(1)))
    }

    @Test func aLongBacklogIsServedInArrivalOrderAsSlotsFree() {
        var dispatcher = Dispatcher()
        for seq in 1...5_000 { #expect(dispatcher.enqueue(job(UInt64(seq)), kind: "k", now: 0) == nil) }
        var running = dispatcher.register(w1, name: "one", capacity: 3, kinds: [], now: 0).map(\.job)
        #expect(running == [job(1), job(2), job(3)])
        var order: [JobID] = running
        while let next = running.first {
            running.removeFirst()
            let freed = dispatcher.finished(next, by: w1, now: 1)
            #expect(freed.owned)
            #expect(freed.assignments.count <= 1)
            running += freed.assignments.map(\.job)
            order += freed.assignments.map(\.job)
        }
        #expect(order == (1...5_000).map { job(UInt64($0)) })
        #expect(dispatcher.queuedCount == 0)
    }

    @Test func aKindNoFreeWorkerServesDoesNotHoldBackTheKindsBehindIt() {
        var dispatcher = Dispatcher()
        _ = dispatcher.enqueue(job(1), kind: "a", now: 0)
        _ = dispatcher.enqueue(job(2), kind: "b", now: 0)
        _ = dispatcher.enqueue(job(3), kind: "a", now: 0)
        _ = dispatcher.enqueue(job(4), kind: "b", now: 0)
        let onlyB = dispatcher.register(w1, name: "b-only", capacity: 8, kinds: ["b"], now: 0)
        #expect(onlyB == [.init(job: job(2), worker: w1), .init(job: job(4), worker: w1)])
        #expect(dispatcher.queuedCount == 2)
        let both = dispatcher.register(w2, name: "any", capacity: 1, kinds: [], now: 0)
        #expect(both == [.init(job: job(1), worker: w2)])
        let freed = dispatcher.finished(job(1), by: w2, now: 1)
        #expect(freed.assignments == [.init(job: job(3), worker: w2)])
        #expect(dispatcher.queuedCount == 0)
    }

    @Test func jobsHandedBackGoAheadOfTheBacklogInTheirOrder() {
        var dispatcher = Dispatcher()
        _ = dispatcher.register(w1, name: "one", capacity: 2, kinds: [], now: 0)
        _ = dispatcher.enqueue(job(1), kind: "k", now: 0)
        _ = dispatcher.enqueue(job(2), kind: "k", now: 0)
        for seq in 3...6 { _ = dispatcher.enqueue(job(UInt64(seq)), kind: "k", now: 0) }
        #expect(dispatcher.queuedCount == 4)
        let bye = dispatcher.forget(w1, now: 1)
        #expect(bye.requeued == [job(1), job(2)])
        #expect(bye.assignments.isEmpty)
        let next = dispatcher.register(w2, name: "two", capacity: 3, kinds: [], now: 2)
        #expect(next.map(\.job) == [job(1), job(2), job(3)])
        #expect(dispatcher.queuedCount == 3)
    }
}
