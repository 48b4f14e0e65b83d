import Foundation
import Synchronization
import Testing
@testable import ReactorCore

@Suite struct SequencerTests {
    typealias Log = LogReactor
    var sequencer = Sequencer(reactor: LogReactor())

    private func job(_ seq: UInt64, _ index: UInt32 = 0) -> JobID { JobID(actionSeq: seq, effectIndex: index) }

    @Test mutating func acceptAppliesSyncMutationsInOrderAndNumbersEverything() {
        let first = sequencer.accept(.sync("a", "b"))
        let second = sequencer.accept(.sync("c"))
        #expect(first.actionSeq == 1)
        #expect(first.version == 2)
        #expect(first.applied.map(\.version) == [1, 2])
        #expect(first.applied.map(\.origin) == [.sync(index: 0), .sync(index: 1)])
        #expect(second.actionSeq == 2)
        #expect(second.version == 3)
        #expect(sequencer.state.log == ["a", "b", "c"])
        #expect(sequencer.actionSeq == 2)
        #expect(sequencer.version == 3)
    }

    @Test mutating func syncMutationsPrecedeAsyncOnesOfTheSameAction() throws {
        let acceptance = sequencer.accept(.act(sync: ["s1", "s2"], effects: [.init("e")]))
        #expect(acceptance.jobs.map(\.id) == [job(1)])
        #expect(acceptance.jobs.first?.kind == "work")
        #expect(sequencer.state.log == ["s1", "s2"])
        let progress = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("a1"))
        #expect(progress.disposition == .applied)
        #expect(progress.applied.map(\.version) == [3])
        #expect(progress.applied.first?.origin == .async(job: job(1), emitIndex: 0))
        #expect(sequencer.state.log == ["s1", "s2", "a1"])
    }

    @Test mutating func shuffledEmitsAreAppliedInEmitOrder() throws {
        _ = sequencer.accept(.act(sync: [], effects: [.init("e")]))
        #expect(try sequencer.apply(job: job(1), emitIndex: 2, mutation: .log("2")).disposition == .buffered)
        #expect(try sequencer.apply(job: job(1), emitIndex: 1, mutation: .log("1")).disposition == .buffered)
        #expect(sequencer.state.log == [])
        #expect(sequencer.version == 0)
        let progress = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("0"))
        #expect(progress.disposition == .applied)
        #expect(progress.applied.map(\.mutation) == [.log("0"), .log("1"), .log("2")])
        #expect(progress.applied.map(\.version) == [1, 2, 3])
        #expect(sequencer.state.log == ["0", "1", "2"])
    }

    @Test mutating func duplicatesAreAppliedOnce() throws {
        _ = sequencer.accept(.act(sync: [], effects: [.init("e")]))
        #expect(try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("x")).disposition == .applied)
        #expect(try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("x")).disposition == .duplicate)
        #expect(try sequencer.apply(job: job(1), emitIndex: 2, mutation: .log("z")).disposition == .buffered)
        #expect(try sequencer.apply(job: job(1), emitIndex: 2, mutation: .log("z")).disposition == .duplicate)
        #expect(try sequencer.complete(job: job(1), emitCount: 3).disposition == .buffered)
        #expect(try sequencer.complete(job: job(1), emitCount: 3).disposition == .duplicate)
        let done = try sequencer.apply(job: job(1), emitIndex: 1, mutation: .log("y"))
        #expect(done.finished == [job(1)])
        // The job has ended: anything more for it is a duplicate, not an error.
        #expect(try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("x")).disposition == .duplicate)
        #expect(try sequencer.complete(job: job(1), emitCount: 3).disposition == .duplicate)
        #expect(try sequencer.fail(job: job(1), error: EffectFailure(message: "late", attempts: 1)).disposition == .duplicate)
        #expect(sequencer.state.log == ["x", "y", "z"])
        #expect(sequencer.version == 3)
        #expect(sequencer.openJobCount == 0)
    }

    @Test mutating func unknownJobsAreRejectedWithATypedErrorAndChangeNothing() {
        _ = sequencer.accept(.act(sync: ["s"], effects: [.init("e")]))
        #expect(throws: SequencerError.unknownJob(job(2))) {
            try sequencer.apply(job: job(2), emitIndex: 0, mutation: .log("future"))
        }
        #expect(throws: SequencerError.unknownJob(job(1, 1))) {
            try sequencer.apply(job: job(1, 1), emitIndex: 0, mutation: .log("no such effect"))
        }
        #expect(throws: SequencerError.unknownJob(job(0))) {
            try sequencer.complete(job: job(0), emitCount: 0)
        }
        #expect(throws: SequencerError.unknownJob(job(9))) {
            try sequencer.fail(job: job(9), error: EffectFailure(message: "x", attempts: 1))
        }
        #expect(sequencer.state.log == ["s"])
        #expect(sequencer.version == 1)
        #expect(sequencer.openJobCount == 1)
    }

    @Test mutating func emitsFarAheadAreRefused() {
        var small = Sequencer(reactor: LogReactor(), emitWindow: 4)
        _ = small.accept(.act(sync: [], effects: [.init("e")]))
        #expect(throws: SequencerError.emitOutOfWindow(job: job(1), emitIndex: 4, window: 4)) {
            try small.apply(job: job(1), emitIndex: 4, mutation: .log("far"))
        }
        #expect(small.version == 0)
    }

    @Test mutating func completeWaitsForEmitsItDeclared() throws {
        _ = sequencer.accept(.act(sync: [], effects: [.init("e")]))
        let early = try sequencer.complete(job: job(1), emitCount: 1)
        #expect(early.disposition == .buffered)
        #expect(early.finished.isEmpty)
        #expect(sequencer.openJobCount == 1)
        let progress = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("only"))
        #expect(progress.finished == [job(1)])
        #expect(sequencer.openJobCount == 0)
    }

    @Test mutating func receivedEmitsCountsAppliedAndBufferedUpToTheFirstGap() throws {
        _ = sequencer.accept(.act(sync: [], effects: [.init("e")]))
        #expect(sequencer.receivedEmits(of: job(1)) == 0)
        _ = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("0"))
        _ = try sequencer.apply(job: job(1), emitIndex: 2, mutation: .log("2"))
        #expect(sequencer.receivedEmits(of: job(1)) == 1)
        _ = try sequencer.apply(job: job(1), emitIndex: 1, mutation: .log("1"))
        #expect(sequencer.receivedEmits(of: job(1)) == 3)
        _ = try sequencer.complete(job: job(1), emitCount: 3)
        #expect(sequencer.receivedEmits(of: job(1)) == nil)
        #expect(sequencer.receivedEmits(of: job(9)) == nil)
    }

    @Test mutating func failureAppliesContiguousEmitsThenTheFailureHook() throws {
        _ = sequencer.accept(.act(sync: [], effects: [.init("e")]))
        _ = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("before"))
        _ = try sequencer.apply(job: job(1), emitIndex: 2, mutation: .log("after a gap"))
        let progress = try sequencer.fail(job: job(1), error: EffectFailure(message: "boom", attempts: 3))
        #expect(progress.disposition == .applied)
        #expect(progress.finished == [job(1)])
        #expect(progress.applied.map(\.origin) == [.failure(job: job(1), index: 0)])
        #expect(sequencer.state.log == ["before", "e failed: boom"])
    }

    @Test mutating func anOrderedLaneHoldsALaterActionsResultsUntilTheEarlierJobEnds() throws {
        _ = sequencer.accept(.act(sync: ["s1"], effects: [.init("A", lane: "L")]))
        _ = sequencer.accept(.act(sync: ["s2"], effects: [.init("B", lane: "L")]))
        _ = sequencer.accept(.act(sync: ["s3"], effects: [.init("C")]))
        // B finishes first, C (no lane) applies at once, B waits for A.
        #expect(try sequencer.apply(job: job(2), emitIndex: 0, mutation: .log("B0")).disposition == .buffered)
        #expect(try sequencer.complete(job: job(2), emitCount: 1).disposition == .buffered)
        #expect(try sequencer.apply(job: job(3), emitIndex: 0, mutation: .log("C0")).disposition == .applied)
        #expect(sequencer.state.log == ["s1", "s2", "s3", "C0"])
        #expect(try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("A0")).disposition == .applied)
        #expect(sequencer.state.log == ["s1", "s2", "s3", "C0", "A0"])
        // A's DONE releases B, which was already complete.
        let release = try sequencer.complete(job: job(1), emitCount: 1)
        #expect(release.finished == [job(1), job(2)])
        #expect(release.applied.map(\.mutation) == [.log("B0")])
        #expect(sequencer.state.log == ["s1", "s2", "s3", "C0", "A0", "B0"])
        #expect(sequencer.openJobCount == 1)
    }

    @Test mutating func aFailedJobInALaneWaitsForItsTurn() throws {
        _ = sequencer.accept(.act(sync: [], effects: [.init("A", lane: "L")]))
        _ = sequencer.accept(.act(sync: [], effects: [.init("B", lane: "L")]))
        #expect(try sequencer.fail(job: job(2), error: EffectFailure(message: "x", attempts: 1)).disposition == .buffered)
        #expect(sequencer.state.log == [])
        let progress = try sequencer.complete(job: job(1), emitCount: 0)
        #expect(progress.finished == [job(1), job(2)])
        #expect(sequencer.state.log == ["B failed: x"])
    }

    @Test mutating func versionAndActionSeqStrictlyIncrease() throws {
        var versions: [UInt64] = []
        var seqs: [UInt64] = []
        for round in 0..<50 {
            let acceptance = sequencer.accept(.act(sync: round.isMultiple(of: 3) ? [] : ["s\(round)"], effects: [.init("e\(round)")]))
            seqs.append(acceptance.actionSeq)
            versions += acceptance.applied.map(\.version)
            let id = try #require(acceptance.jobs.first?.id)
            versions += try sequencer.apply(job: id, emitIndex: 0, mutation: .log("a\(round)")).applied.map(\.version)
            _ = try sequencer.complete(job: id, emitCount: 1)
        }
        #expect(seqs == Array(1...50))
        #expect(versions == Array(1...UInt64(versions.count)))
        #expect(versions.count == 50 + 33)
        #expect(sequencer.openJobCount == 0)
    }

    @Test mutating func unreportedJobsListWhatStillHasToRun() throws {
        _ = sequencer.accept(.act(sync: [], effects: [.init("A"), .init("B")]))
        _ = sequencer.accept(.act(sync: [], effects: [.init("C")]))
        _ = try sequencer.complete(job: job(1, 1), emitCount: 0)
        #expect(sequencer.unreportedJobs.map(\.id) == [job(1, 0), job(2, 0)])
        #expect(sequencer.job(job(2))?.effect == .init("C"))
        #expect(sequencer.job(job(1, 1)) == nil)
    }

    @Test func middlewareSeesEveryAppliedMutationWithTheStateAfterIt() throws {
        let recorder = Recorder()
        var sequencer = Sequencer(reactor: LogReactor(), middlewares: [recorder])
        _ = sequencer.accept(.act(sync: ["a"], effects: [.init("e")]))
        _ = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("b"))
        #expect(recorder.seen == [
            Recorder.Entry(version: 1, mutation: .log("a"), log: ["a"]),
            Recorder.Entry(version: 2, mutation: .log("b"), log: ["a", "b"]),
        ])
    }
}

/// Middleware that remembers what it saw.
final class Recorder: Middleware {
    typealias Base = LogReactor

    struct Entry: Equatable {
        var version: UInt64
        var mutation: LogReactor.Mutation
        var log: [String]
    }

    private let entries = Mutex<[Entry]>([])

    var seen: [Entry] { entries.withLock { $0 } }

    func didApply(_ applied: AppliedMutation<LogReactor.Mutation>, state: LogReactor.State) {
        entries.withLock { $0.append(Entry(version: applied.version, mutation: applied.mutation, log: state.log)) }
    }
}

@Suite struct SequencerCheckpointTests {
    @Test func aRestoredSequencerContinuesExactlyWhereTheOriginalWas() throws {
        var original = Sequencer(reactor: LogReactor())
        _ = original.accept(.act(sync: ["s1"], effects: [.init("A", lane: "L"), .init("B")]))
        _ = original.accept(.act(sync: [], effects: [.init("C", lane: "L")]))
        let a = JobID(actionSeq: 1, effectIndex: 0)
        let c = JobID(actionSeq: 2, effectIndex: 0)
        _ = try original.apply(job: a, emitIndex: 0, mutation: .log("A0"))
        _ = try original.apply(job: a, emitIndex: 2, mutation: .log("A2"))
        _ = try original.apply(job: c, emitIndex: 0, mutation: .log("C0"))
        _ = try original.complete(job: c, emitCount: 1)

        var restored = Sequencer(reactor: LogReactor(), restoring: original.checkpoint())
        #expect(restored.state == original.state)
        #expect(restored.version == original.version)
        #expect(restored.actionSeq == original.actionSeq)
        // A late duplicate is still a duplicate after the restore.
        #expect(try restored.apply(job: a, emitIndex: 0, mutation: .log("A0")).disposition == .duplicate)
        // Buffered results and the lane order survive too.
        let progress = try restored.apply(job: a, emitIndex: 1, mutation: .log("A1"))
        #expect(progress.applied.map(\.mutation) == [.log("A1"), .log("A2")])
        let end = try restored.complete(job: a, emitCount: 3)
        #expect(end.finished == [a, JobID(actionSeq: 2, effectIndex: 0)])
        #expect(restored.state.log == ["s1", "A0", "A1", "A2", "C0"])
        #expect(restored.unreportedJobs.map(\.id) == [JobID(actionSeq: 1, effectIndex: 1)])
    }

    @Test func lanesAreCheckpointedAsPlainArraysOfJobs() throws {
        var sequencer = Sequencer(reactor: LogReactor())
        for name in ["A", "B", "C"] { _ = sequencer.accept(.act(sync: [], effects: [.init(name, lane: "L")])) }
        _ = try sequencer.complete(job: JobID(actionSeq: 1, effectIndex: 0), emitCount: 0)
        // The format snapshots already on disk use: the lane is the list of its open jobs.
        let encoded = try JSONEncoder().encode(sequencer.checkpoint())
        let json = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        let lanes = try #require((json["ledger"] as? [String: Any])?["lanes"] as? [String: Any])
        let lane = try #require(lanes["L"] as? [[String: Any]])
        #expect(lane.map { ($0["actionSeq"] as? NSNumber)?.intValue } == [2, 3])
        let decoded = try JSONDecoder().decode(SequencerCheckpoint<LogReactor>.self, from: encoded)
        var restored = Sequencer(reactor: LogReactor(), restoring: decoded)
        let end = try restored.complete(job: JobID(actionSeq: 3, effectIndex: 0), emitCount: 0)
        #expect(end.finished.isEmpty)
        #expect(try restored.complete(job: JobID(actionSeq: 2, effectIndex: 0), emitCount: 0).finished
                == [JobID(actionSeq: 2, effectIndex: 0), JobID(actionSeq: 3, effectIndex: 0)])
    }
}

@Suite struct LongLaneTests {
    /// Thousands of jobs in one lane, finishing in reverse: each waits for the one before, and
    /// the last report releases every result in action order.
    @Test func aLongLaneReleasesEveryResultInActionOrder() throws {
        var sequencer = Sequencer(reactor: LogReactor())
        let count = 3_000
        for index in 1...count { _ = sequencer.accept(.act(sync: [], effects: [.init("job\(index)", lane: "L")])) }
        for index in stride(from: count, through: 2, by: -1) {
            let job = JobID(actionSeq: UInt64(index), effectIndex: 0)
            #expect(try sequencer.apply(job: job, emitIndex: 0, mutation: .log("\(index)")).disposition == .buffered)
            #expect(try sequencer.complete(job: job, emitCount: 1).disposition == .buffered)
        }
        let first = JobID(actionSeq: 1, effectIndex: 0)
        #expect(try sequencer.apply(job: first, emitIndex: 0, mutation: .log("1")).applied.count == 1)
        let end = try sequencer.complete(job: first, emitCount: 1)
        #expect(end.finished.count == count)
        #expect(end.applied.count == count - 1)
        #expect(sequencer.state.log == (1...count).map(String.init))
        #expect(sequencer.openJobCount == 0)
    }

    @Test func laneQueueRemovesFromTheFrontAndAnywhereElse() {
        var lane = LaneQueue()
        let jobs = (1...2_500).map { JobID(actionSeq: UInt64($0), effectIndex: 0) }
        for job in jobs { lane.append(job) }
        lane.remove(jobs[1_000])
        for job in jobs.prefix(1_500) where job != jobs[1_000] {
            #expect(lane.first == job)
            lane.remove(job)
        }
        #expect(Array(lane.jobs) == Array(jobs.dropFirst(1_500)))
        for job in jobs.dropFirst(1_500) { lane.remove(job) }
        #expect(lane.isEmpty)
        #expect(lane.first == nil)
    }
}
