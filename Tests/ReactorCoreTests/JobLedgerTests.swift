import Foundation
import Testing
@testable import ReactorCore

/// The job ledger keeps a count of open jobs only for actions with several jobs; an action with
/// one job is complete when that job ends. These pin what a runtime sees of it: which actions a
/// call completes, which identities are spent or unknown, and what a checkpoint stores.
@Suite struct JobLedgerTests {
    var sequencer = Sequencer(reactor: CancelReactor())

    private func job(_ seq: UInt64, _ index: UInt32 = 0) -> JobID { JobID(actionSeq: seq, effectIndex: index) }

    private mutating func finish(_ id: JobID) throws -> ReactorCore.Progress<CancelReactor.Mutation> {
        _ = try sequencer.apply(job: id, emitIndex: 0, mutation: .log("\(id)"))
        return try sequencer.complete(job: id, emitCount: 1)
    }

    @Test mutating func anActionWithOneJobCompletesWithItAndKeepsNoCount() throws {
        _ = sequencer.accept(.act(effects: [.init("a")]))
        #expect(sequencer.ledger.actions.isEmpty)
        #expect(sequencer.ledger.open[job(1)]?.sharesAction == false)
        #expect(sequencer.hasOpenJobs(actionSeq: 1))
        // Only index 0 was issued: index 1 is unknown while the job is open, not a duplicate.
        #expect(throws: SequencerError.unknownJob(job(1, 1))) { try sequencer.apply(job: job(1, 1), emitIndex: 0, mutation: .log("x")) }
        let emitted = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("a:0"))
        #expect(emitted.completedActions == [])
        let done = try sequencer.complete(job: job(1), emitCount: 1)
        #expect(done.finished == [job(1)])
        #expect(done.completedActions == [1])
        #expect(!sequencer.hasOpenJobs(actionSeq: 1))
        #expect(try sequencer.complete(job: job(1), emitCount: 1).disposition == .duplicate)
        #expect(sequencer.state.log == ["a:0"])
    }

    @Test mutating func anActionWithSeveralJobsCompletesWithItsLastJobOnly() throws {
        _ = sequencer.accept(.act(effects: [.init("a"), .init("b"), .init("c")]))
        #expect(sequencer.ledger.actions[1] == ActionJobs(effectCount: 3, remaining: 3))
        #expect(try finish(job(1, 2)).completedActions == [])
        #expect(try finish(job(1, 0)).completedActions == [])
        #expect(sequencer.hasOpenJobs(actionSeq: 1))
        #expect(throws: SequencerError.unknownJob(job(1, 3))) { try sequencer.apply(job: job(1, 3), emitIndex: 0, mutation: .log("x")) }
        #expect(try sequencer.apply(job: job(1, 0), emitIndex: 0, mutation: .log("again")).disposition == .duplicate)
        let last = try finish(job(1, 1))
        #expect(last.finished == [job(1, 1)])
        #expect(last.completedActions == [1])
        #expect(sequencer.ledger.actions.isEmpty)
        #expect(!sequencer.hasOpenJobs(actionSeq: 1))
    }

    @Test mutating func aLaneReleasingWaitingJobsCompletesEachOfTheirActionsInOrder() throws {
        _ = sequencer.accept(.act(effects: [.init("a", lane: "L")]))
        _ = sequencer.accept(.act(effects: [.init("b", lane: "L"), .init("c")]))
        _ = sequencer.accept(.act(effects: [.init("d", lane: "L")]))
        #expect(try finish(job(2, 1)).completedActions == [])
        // b and d wait for a: their DONEs are held.
        #expect(try finish(job(3)).completedActions == [])
        #expect(try finish(job(2)).completedActions == [])
        let first = try finish(job(1))
        #expect(first.finished == [job(1), job(2), job(3)])
        #expect(first.completedActions == [1, 2, 3])
        #expect(sequencer.openJobCount == 0)
    }

    @Test mutating func aLaneAndAHeldFailureSurviveACheckpointAndLeaveNothingBehind() throws {
        _ = sequencer.accept(.act(effects: [.init("a", lane: "L")]))
        _ = sequencer.accept(.act(effects: [.init("b", lane: "L"), .init("c")]))
        // b fails while a runs: its failure waits for its turn in the lane.
        let failure = EffectFailure(message: "boom", attempts: 2)
        #expect(try sequencer.fail(job: job(2), error: failure).disposition == .buffered)
        #expect(sequencer.job(job(2))?.lane == "L")
        #expect(sequencer.job(job(2, 1))?.lane == nil)
        let bytes = try JSONEncoder().encode(sequencer.checkpoint())
        var restored = Sequencer(reactor: CancelReactor(), restoring: try JSONDecoder().decode(SequencerCheckpoint<CancelReactor>.self, from: bytes))
        #expect(restored.job(job(1))?.lane == "L")
        #expect(restored.job(job(2))?.lane == "L")
        #expect(restored.ledger.failures == [job(2): failure])
        #expect(restored.unreportedJobs.map(\.id) == [job(1), job(2, 1)])
        #expect(try restored.fail(job: job(2), error: failure).disposition == .duplicate)
        _ = try restored.apply(job: job(1), emitIndex: 0, mutation: .log("a"))
        let first = try restored.complete(job: job(1), emitCount: 1)
        #expect(first.finished == [job(1), job(2)])
        #expect(first.completedActions == [1])
        _ = try restored.apply(job: job(2, 1), emitIndex: 0, mutation: .log("c"))
        #expect(try restored.complete(job: job(2, 1), emitCount: 1).completedActions == [2])
        #expect(restored.openJobCount == 0)
        #expect(restored.ledger.jobLanes.isEmpty)
        #expect(restored.ledger.failures.isEmpty)
        #expect(restored.ledger.lanes.isEmpty)
    }

    @Test mutating func cancellingTheLastOpenJobOfAnActionCompletesIt() throws {
        _ = sequencer.accept(.act(effects: [.init("a", id: "s")]))
        _ = sequencer.accept(.act(effects: [.init("b", id: "s"), .init("c")]))
        let cancelling = sequencer.accept(.act(cancel: ["s"]))
        #expect(cancelling.cancelled == [job(1), job(2)])
        // Action 2 still has c open.
        #expect(cancelling.completedActions == [1])
        #expect(sequencer.hasOpenJobs(actionSeq: 2))
        #expect(try finish(job(2, 1)).completedActions == [2])
    }

    @Test mutating func aCheckpointListsEveryActionWithOpenJobsAndRestoresTheirCounts() throws {
        _ = sequencer.accept(.act(effects: [.init("a")]))
        _ = sequencer.accept(.act(effects: [.init("b"), .init("c")]))
        _ = try finish(job(2, 0))
        // Stored as every release has stored it: the single-job action listed too.
        #expect(sequencer.ledger.storedActions == [1: ActionJobs(effectCount: 1, remaining: 1), 2: ActionJobs(effectCount: 2, remaining: 1)])
        let bytes = try JSONEncoder().encode(sequencer.checkpoint())
        var restored = Sequencer(reactor: CancelReactor(), restoring: try JSONDecoder().decode(SequencerCheckpoint<CancelReactor>.self, from: bytes))
        #expect(restored.ledger.actions == [2: ActionJobs(effectCount: 2, remaining: 1)])
        #expect(restored.ledger.open[job(1)]?.sharesAction == false)
        #expect(restored.ledger.open[job(2, 1)]?.sharesAction == true)
        #expect(throws: SequencerError.unknownJob(job(1, 1))) { try restored.apply(job: job(1, 1), emitIndex: 0, mutation: .log("x")) }
        _ = try restored.apply(job: job(1), emitIndex: 0, mutation: .log("a"))
        #expect(try restored.complete(job: job(1), emitCount: 1).completedActions == [1])
        _ = try restored.apply(job: job(2, 1), emitIndex: 0, mutation: .log("c"))
        #expect(try restored.complete(job: job(2, 1), emitCount: 1).completedActions == [2])
        #expect(restored.openJobCount == 0)
        #expect(restored.ledger.actions.isEmpty)
    }
}

/// A backlog of open jobs past the ledger's window, ended in a random order with a
/// checkpoint in the middle: every job and every action ends exactly once, nothing is lost.
@Suite struct JobLedgerBacklogTests {
    @Test func aBacklogEndingInAnyOrderEndsEveryJobAndActionOnce() throws {
        let seed: UInt64 = 7
        var random = CancellationModelTests.Generator(state: seed)
        var sequencer = Sequencer(reactor: CancelReactor())
        var jobs: [JobID] = []
        // Past the window's 4,096 slots, small enough for a debug build beside other tests.
        for seq in UInt64(1)...6_000 {
            // Every tenth action has two jobs, every seventh none.
            let count = seq % 7 == 0 ? 0 : seq % 10 == 0 ? 2 : 1
            let acceptance = sequencer.accept(.act(effects: (0 ..< count).map { CancelReactor.Effect("e\(seq).\($0)") }))
            jobs += acceptance.jobs.map(\.id)
        }
        jobs.shuffle(using: &random)
        var completed: [UInt64: Int] = [:]
        var finished = 0
        for (position, id) in jobs.enumerated() {
            if position == jobs.count / 2 {
                let bytes = try JSONEncoder().encode(sequencer.checkpoint())
                sequencer = Sequencer(reactor: CancelReactor(), restoring: try JSONDecoder().decode(SequencerCheckpoint<CancelReactor>.self, from: bytes))
            }
            #expect(try sequencer.apply(job: id, emitIndex: 0, mutation: .log("\(id)")).disposition == .applied)
            let progress = try sequencer.complete(job: id, emitCount: 1)
            finished += progress.finished.count
            for action in progress.completedActions { completed[action, default: 0] += 1 }
        }
        let withJobs = Set(jobs.map(\.actionSeq))
        #expect(finished == jobs.count)
        #expect(Set(completed.keys) == withJobs)
        #expect(completed.values.allSatisfy { $0 == 1 })
        #expect(sequencer.openJobCount == 0)
        #expect(sequencer.state.log.count == jobs.count)
        #expect(Set(sequencer.state.log) == Set(jobs.map(\.description)))
        // A job that ended is spent: a late report is a duplicate.
        #expect(try sequencer.complete(job: jobs[0], emitCount: 1).disposition == .duplicate)
    }
}
