@testable import ReactorBus
import ReactorCore
import ReactorWire
import Testing

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
        let freed = dispatcher.finishedAndAssigned(job(1), by: w1, now: 2)
        #expect(freed.owned)
        #expect(freed.assignments == [.init(job: job(3), worker: w1)])
        #expect(dispatcher.queuedCount == 0)
    }

    @Test func onlyWorkersServingAKindGetItsJobs() {
        var dispatcher = Dispatcher()
        _ = dispatcher.register(w1, name: "one", capacity: 4, kinds: ["a"], now: 0)
        #expect(dispatcher.enqueue(job(1), kind: "b", now: 0) == nil)
        #expect(dispatcher.enqueue(job(2), kind: "a", now: 0) == .init(job: job(2), worker: w1))
        #expect(dispatcher.kind(ofAssigned: job(1)) == nil, "waiting, not given to anyone")
        #expect(dispatcher.kind(ofAssigned: job(2)) == "a")
        let assigned = dispatcher.register(w2, name: "two", capacity: 4, kinds: ["b"], now: 0)
        #expect(assigned == [.init(job: job(1), worker: w2)])
        #expect(dispatcher.kind(ofAssigned: job(1)) == "b")
        _ = dispatcher.finishedAndAssigned(job(1), by: w2, now: 1)
        #expect(dispatcher.kind(ofAssigned: job(1)) == nil)
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
        #expect(dispatcher.finishedAndAssigned(job(1), by: w1, now: 3_001).owned == false)
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
        let late = dispatcher.finishedAndAssigned(job(1), by: w1, now: 1_002)
        #expect(late.owned == false)
        #expect(late.assignments == [.init(job: job(2), worker: w1)])
    }

    @Test func aJobThatTimesOutOnTheOnlyWorkerGoesBackToItAndTakesOneSlot() {
        var dispatcher = Dispatcher(deadAfterMilliseconds: 100_000, jobTimeoutMilliseconds: 1_000)
        _ = dispatcher.register(w1, name: "one", capacity: 2, kinds: [], now: 0)
        #expect(dispatcher.enqueue(job(1), kind: "k", now: 0) == .init(job: job(1), worker: w1))
        // No other worker: the job it is taken from is the one that gets it again.
        let expiry = dispatcher.tick(now: 1_000)
        #expect(expiry.requeued == [job(1)])
        #expect(expiry.assignments == [.init(job: job(1), worker: w1)])
        // Both runs of job 1 hold one slot between them: the second slot is free.
        #expect(dispatcher.enqueue(job(2), kind: "k", now: 1_001) == .init(job: job(2), worker: w1))
        #expect(dispatcher.enqueue(job(3), kind: "k", now: 1_001) == nil)
        let done = dispatcher.finishedAndAssigned(job(1), by: w1, now: 1_002)
        #expect(done.owned)
        #expect(done.assignments == [.init(job: job(3), worker: w1)])
        // The other run's report is not the owner's any more and frees nothing.
        let late = dispatcher.finishedAndAssigned(job(1), by: w1, now: 1_003)
        #expect(late.owned == false)
        #expect(late.assignments.isEmpty)
        #expect(dispatcher.enqueue(job(4), kind: "k", now: 1_004) == nil)
        #expect(dispatcher.finishedAndAssigned(job(2), by: w1, now: 1_005).assignments == [.init(job: job(4), worker: w1)])
    }

    @Test func aSlowWorkerThatAnnouncesItselfAgainLeavesItsTakenJobToItsNewOwner() {
        var dispatcher = Dispatcher(deadAfterMilliseconds: 100_000, jobTimeoutMilliseconds: 1_000)
        _ = dispatcher.register(w1, name: "one", capacity: 1, kinds: [], now: 0)
        _ = dispatcher.enqueue(job(1), kind: "k", now: 0)
        _ = dispatcher.register(w2, name: "two", capacity: 1, kinds: [], now: 10)
        #expect(dispatcher.tick(now: 1_000).assignments == [.init(job: job(1), worker: w2)])
        // The slow worker restarts its session: the job it lost is not its to give back.
        #expect(dispatcher.register(w1, name: "one", capacity: 1, kinds: [], now: 1_001).isEmpty)
        #expect(dispatcher.isOwner(w2, of: job(1)))
        #expect(dispatcher.kind(ofAssigned: job(1)) == "k")
        #expect(dispatcher.finishedAndAssigned(job(1), by: w2, now: 1_002).owned)
    }

    @Test func aCancelledJobLeavesTheQueueWhateverItsKind() {
        var dispatcher = Dispatcher()
        _ = dispatcher.register(w1, name: "one", capacity: 1, kinds: [], now: 0)
        _ = dispatcher.enqueue(job(1), kind: "a", now: 0)
        _ = dispatcher.enqueue(job(2), kind: "a", now: 0)
        _ = dispatcher.enqueue(job(3), kind: "b", now: 0)
        #expect(dispatcher.queuedCount == 2)
        #expect(dispatcher.cancel(job(3), now: 1).queued)
        #expect(dispatcher.queuedCount == 1)
        let owned = dispatcher.cancel(job(1), now: 1)
        #expect(!owned.queued && owned.holders == [w1])
        #expect(owned.assignments == [.init(job: job(2), worker: w1)])
        #expect(!dispatcher.cancel(job(9), now: 1).queued)
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
            let freed = dispatcher.finishedAndAssigned(next, by: w1, now: 1)
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
        let freed = dispatcher.finishedAndAssigned(job(1), by: w2, now: 1)
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

    // MARK: Trust

    @Test func anAnnouncedCapacityIsClampedToTheMaximum() {
        var dispatcher = Dispatcher(maxWorkerCapacity: 4)
        #expect(dispatcher.trustedCapacity(announced: 1_000_000) == 4)
        #expect(dispatcher.trustedCapacity(announced: UInt64.max) == 4)
        #expect(dispatcher.trustedCapacity(announced: 3) == 3)
        #expect(dispatcher.trustedCapacity(announced: 0) == 1)
        for seq in 1...10 { _ = dispatcher.enqueue(job(UInt64(seq)), kind: "k", now: 0) }
        let assigned = dispatcher.register(w1, name: "greedy", capacity: 1_000_000, kinds: [], now: 0)
        #expect(assigned.map(\.job) == (1...4).map { job(UInt64($0)) })
        #expect(dispatcher.trustedCapacity(of: w1) == 4)
        #expect(dispatcher.queuedCount == 6)
        #expect(Dispatcher().maxWorkerCapacity == 256)
    }

    /// A greedy worker (takes jobs, never reports) next to a healthy one of capacity 1.
    private func greedyAndHealthy(quarantineAfter: Int = 3) -> Dispatcher {
        var dispatcher = Dispatcher(deadAfterMilliseconds: 1_000_000, jobTimeoutMilliseconds: 500, maxWorkerCapacity: 4, quarantineAfter: quarantineAfter)
        _ = dispatcher.register(w1, name: "greedy", capacity: 1_000_000, kinds: [], now: 0)
        _ = dispatcher.register(w2, name: "healthy", capacity: 1, kinds: [], now: 0)
        return dispatcher
    }

    @Test func aWorkerWhoseJobsKeepTimingOutIsQuarantinedAndItsJobsGoToTheHealthyWorker() {
        var dispatcher = greedyAndHealthy()
        var toGreedy: [JobID] = []
        var toHealthy: [JobID] = []
        for seq in 1...5 {
            let assignment = dispatcher.enqueue(job(UInt64(seq)), kind: "k", now: 0)
            if assignment?.worker == w1 { toGreedy.append(job(UInt64(seq))) }
            if assignment?.worker == w2 { toHealthy.append(job(UInt64(seq))) }
        }
        #expect(toGreedy.count == 4)
        #expect(toHealthy.count == 1)
        // The healthy worker keeps its job moving; it reports in time.
        #expect(dispatcher.finishedAndAssigned(toHealthy[0], by: w2, now: 100).assignments.isEmpty)
        // All four greedy jobs time out together: the third quarantines it, the fourth is taken back with it.
        let expiry = dispatcher.tick(now: 500)
        #expect(expiry.quarantined == [w1])
        #expect(expiry.onProbation.isEmpty)
        #expect(Set(expiry.requeued) == Set(toGreedy))
        #expect(expiry.requeued.count == 4)
        #expect(expiry.assignments.count == 1)
        #expect(expiry.assignments.allSatisfy { $0.worker == w2 })
        #expect(dispatcher.isQuarantined(w1))
        #expect(dispatcher.quarantinedCount == 1)
        #expect(dispatcher.trustedCapacity(of: w1) == 0)
        // While quarantined, every job goes to the healthy worker, even when it is busy: they wait.
        var served: [JobID] = expiry.assignments.map(\.job)
        var running = served
        #expect(dispatcher.enqueue(job(6), kind: "k", now: 501) == nil)
        while let next = running.first {
            running.removeFirst()
            let freed = dispatcher.finishedAndAssigned(next, by: w2, now: 600)
            #expect(freed.owned)
            #expect(freed.assignments.allSatisfy { $0.worker == w2 })
            running += freed.assignments.map(\.job)
            served += freed.assignments.map(\.job)
        }
        #expect(Set(served) == Set(toGreedy + [job(6)]))
        #expect(served.count == 5)
        #expect(dispatcher.queuedCount == 0)
    }

    @Test func timeoutsBelowTheThresholdOrBrokenByAReportInTimeDoNotQuarantine() {
        var dispatcher = Dispatcher(deadAfterMilliseconds: 1_000_000, jobTimeoutMilliseconds: 500, quarantineAfter: 3)
        _ = dispatcher.register(w1, name: "slowish", capacity: 8, kinds: [], now: 0)
        _ = dispatcher.enqueue(job(1), kind: "k", now: 0)
        _ = dispatcher.enqueue(job(2), kind: "k", now: 0)
        #expect(dispatcher.tick(now: 500).quarantined.isEmpty)
        // Two timeouts in a row (the jobs came back to it: it is the only worker), then one in time.
        let retried = dispatcher.finishedAndAssigned(job(1), by: w1, now: 600)
        #expect(retried.owned)
        #expect(!dispatcher.isQuarantined(w1))
        // Two more timeouts: 2 in a row again, not 4.
        _ = dispatcher.enqueue(job(3), kind: "k", now: 600)
        let expiry = dispatcher.tick(now: 1_100)
        #expect(expiry.requeued.count == 2)
        #expect(expiry.quarantined.isEmpty)
        #expect(dispatcher.trustedCapacity(of: w1) == 8)
    }

    @Test func quarantineAfterZeroNeverQuarantines() {
        var dispatcher = greedyAndHealthy(quarantineAfter: 0)
        for seq in 1...5 { _ = dispatcher.enqueue(job(UInt64(seq)), kind: "k", now: 0) }
        let expiry = dispatcher.tick(now: 500)
        #expect(expiry.requeued.count == 5)
        #expect(expiry.quarantined.isEmpty)
        #expect(dispatcher.quarantinedCount == 0)
    }

    @Test func afterTheCoolOffAQuarantinedWorkerGetsOneJobAndComesBackWhenItEndsInTime() {
        var dispatcher = greedyAndHealthy()
        for seq in 1...4 { _ = dispatcher.enqueue(job(UInt64(seq)), kind: "k", now: 0) }
        // Three go to the greedy worker (least busy first), one to the healthy one.
        #expect(dispatcher.tick(now: 500).quarantined == [w1])
        // Still in its cool-off (one job timeout, 500 ms): nothing for it.
        #expect(dispatcher.tick(now: 999).onProbation.isEmpty)
        for seq in 10...13 { _ = dispatcher.enqueue(job(UInt64(seq)), kind: "k", now: 999) }
        let woken = dispatcher.tick(now: 1_000)
        #expect(woken.onProbation == [w1])
        #expect(dispatcher.trustedCapacity(of: w1) == 1)
        // On probation it holds one job, not four.
        #expect(woken.assignments.filter { $0.worker == w1 }.count == 1)
        let probationJob = woken.assignments.first { $0.worker == w1 }?.job
        #expect(probationJob != nil)
        // It recovered: the job ends in time, its capacity is back.
        let report = dispatcher.finishedAndAssigned(probationJob ?? job(0), by: w1, now: 1_200)
        #expect(report.owned)
        #expect(report.recovered)
        #expect(dispatcher.trustedCapacity(of: w1) == 4)
        #expect(!dispatcher.isQuarantined(w1))
        #expect(report.assignments.filter { $0.worker == w1 }.count >= 1)
    }

    @Test func aWorkerThatKeepsFailingIsQuarantinedAgainForLongerAndNeverHoldsMoreThanOneJob() {
        var dispatcher = greedyAndHealthy()
        for seq in 1...200 { _ = dispatcher.enqueue(job(UInt64(seq)), kind: "k", now: 0) }
        #expect(dispatcher.tick(now: 500).quarantined == [w1])
        // The healthy worker never reports here, so jobs pile up for it: only the greedy one's
        // probations take any. Each relapse doubles the cool-off: 500, 1,000, 2,000, 4,000 ms.
        var now: UInt64 = 500
        var probations: [UInt64] = []
        var quarantines: [UInt64] = [500]
        while now < 20_000 {
            now += 100
            let expiry = dispatcher.tick(now: now)
            if !expiry.onProbation.isEmpty {
                probations.append(now)
                #expect(expiry.assignments.filter { $0.worker == w1 }.count == 1)
            }
            if !expiry.quarantined.isEmpty { quarantines.append(now) }
            #expect((dispatcher.trustedCapacity(of: w1) ?? 0) <= 1)
        }
        #expect(probations == [1_000, 2_500, 5_000, 9_500, 18_000])
        #expect(quarantines == [500, 1_500, 3_000, 5_500, 10_000, 18_500])
    }

    @Test func aNewReadyOnTheSameConnectionDoesNotEndAQuarantine() {
        var dispatcher = greedyAndHealthy()
        for seq in 1...4 { _ = dispatcher.enqueue(job(UInt64(seq)), kind: "k", now: 0) }
        #expect(dispatcher.tick(now: 500).quarantined == [w1])
        let again = dispatcher.register(w1, name: "greedy", capacity: 1_000_000, kinds: [], now: 600)
        #expect(again.isEmpty)
        #expect(dispatcher.isQuarantined(w1))
        #expect(dispatcher.enqueue(job(5), kind: "k", now: 601) == nil)
        // A new connection is a new worker, with a clean record.
        let w3 = PeerID([3])
        let fresh = dispatcher.register(w3, name: "greedy", capacity: 1_000_000, kinds: [], now: 700)
        #expect(fresh.count == 4)
        #expect(fresh.allSatisfy { $0.worker == w3 })
    }
}

extension Dispatcher {
    /// ``finished(_:by:now:)``, then every assignment the free slot made possible, in order.
    mutating func finishedAndAssigned(_ job: JobID, by peer: PeerID, now: UInt64) -> (owned: Bool, assignments: [Assignment], recovered: Bool) {
        let (owned, recovered) = finished(job, by: peer, now: now)
        return (owned, assignQueued(now: now), recovered)
    }
}
