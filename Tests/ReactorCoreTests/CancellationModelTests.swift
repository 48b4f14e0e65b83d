import Foundation
import Testing
@testable import ReactorCore

/// Random interleavings of actions that start and cancel jobs, and of their results in any
/// order with duplicates, checked against the rules: versions consecutive, a job's emits applied
/// in order and once, nothing of a job applied after its cancellation, every job ending exactly
/// once (finished or cancelled), each action with jobs reported complete exactly once, by the
/// event that ended its last job, and a checkpoint round trip in the middle changing nothing.
@Suite struct CancellationModelTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// What the run saw, to check against the rules.
    struct Observed {
        var version: UInt64 = 0
        var log: [String] = []
        var nextEmit: [JobID: UInt32] = [:]
        var cancelled: Set<JobID> = []
        var finished: Set<JobID> = []
        /// Per action with jobs, the effect indices not ended yet.
        var openJobs: [UInt64: Set<UInt32>] = [:]
        var completed: Set<UInt64> = []
        var failures: [String] = []

        /// Actions that had jobs.
        var withJobs: [UInt64] = []

        mutating func issued(_ seq: UInt64, count: Int) {
            guard count > 0 else { return }
            openJobs[seq] = Set(0 ..< UInt32(count))
            withJobs.append(seq)
        }

        mutating func saw(_ applied: [AppliedMutation<CancelReactor.Mutation>]) {
            for mutation in applied {
                version += 1
                if mutation.version != version { failures.append("version \(mutation.version), expected \(version)") }
                guard case .log(let line) = mutation.mutation else { continue }
                log.append(line)
                switch mutation.origin {
                case .async(let job, let index):
                    if cancelled.contains(job) { failures.append("emit \(index) of \(job) applied after its cancellation") }
                    if finished.contains(job) { failures.append("emit \(index) of \(job) applied after it finished") }
                    if index != nextEmit[job, default: 0] { failures.append("emit \(index) of \(job) out of order") }
                    nextEmit[job] = index + 1
                case .cancelled(let job, _):
                    if line != "cancelled \(job)" { failures.append("cancel mutation \(line) for \(job)") }
                case .sync, .failure:
                    break
                }
            }
        }

        mutating func ended(finished jobs: [JobID], cancelled cancels: [JobID], completing actions: [UInt64]) {
            for job in cancels {
                if !cancelled.insert(job).inserted || finished.contains(job) { failures.append("\(job) cancelled after it ended") }
            }
            for job in jobs {
                if !finished.insert(job).inserted || cancelled.contains(job) { failures.append("\(job) finished twice, or after its cancellation") }
            }
            // The actions whose last job ended now, and only those, are reported, each once.
            var expected: Set<UInt64> = []
            for job in cancels + jobs {
                openJobs[job.actionSeq]?.remove(job.effectIndex)
                if openJobs[job.actionSeq]?.isEmpty == true {
                    openJobs[job.actionSeq] = nil
                    expected.insert(job.actionSeq)
                }
            }
            if Set(actions) != expected || actions.count != expected.count { failures.append("completed \(actions), expected \(expected.sorted())") }
            for action in actions where !completed.insert(action).inserted { failures.append("action \(action) completed twice") }
        }
    }

    static let emitsPerJob: UInt32 = 3

    @Test(arguments: 1...40)
    func randomInterleavingsKeepTheRules(seed: UInt64) throws {
        var random = Generator(state: seed)
        var sequencer = Sequencer(reactor: CancelReactor())
        var observed = Observed()
        var issued: [JobID] = []
        let ids = ["x", "y"]
        for step in 0..<300 {
            if step == 150 {
                let bytes = try JSONEncoder().encode(sequencer.checkpoint())
                sequencer = Sequencer(reactor: CancelReactor(), restoring: try JSONDecoder().decode(SequencerCheckpoint<CancelReactor>.self, from: bytes))
            }
            let roll = Int.random(in: 0..<10, using: &random)
            if roll < 3 || issued.isEmpty {
                let seq = sequencer.actionSeq + 1
                let count = Int.random(in: 0...2, using: &random)
                let effects = (0..<count).map { index in
                    CancelReactor.Effect("\(JobID(actionSeq: seq, effectIndex: UInt32(index)))", id: ids.randomElement(using: &random).flatMap { Bool.random(using: &random) ? $0 : nil },
                                         inFlight: Bool.random(using: &random), lane: Bool.random(using: &random) ? "L" : nil)
                }
                let cancel = Int.random(in: 0..<4, using: &random) == 0 ? [ids.randomElement(using: &random)!] : []
                let acceptance = sequencer.accept(.act(sync: ["sync \(seq)"], effects: effects, cancel: cancel))
                observed.issued(seq, count: count)
                observed.saw(acceptance.applied)
                observed.ended(finished: acceptance.finished, cancelled: acceptance.cancelled, completing: acceptance.completedActions)
                issued += (0..<count).map { JobID(actionSeq: seq, effectIndex: UInt32($0)) }
            } else {
                let job = issued.randomElement(using: &random)!
                let progress: ReactorCore.Progress<CancelReactor.Mutation>
                if roll < 9 {
                    let index = UInt32.random(in: 0..<Self.emitsPerJob, using: &random)
                    progress = try sequencer.apply(job: job, emitIndex: index, mutation: .log("\(job):\(index)"))
                } else {
                    progress = try sequencer.complete(job: job, emitCount: Self.emitsPerJob)
                }
                observed.saw(progress.applied)
                observed.ended(finished: progress.finished, cancelled: [], completing: progress.completedActions)
            }
            for seq in observed.withJobs where sequencer.hasOpenJobs(actionSeq: seq) != (observed.openJobs[seq] != nil) {
                observed.failures.append("hasOpenJobs(\(seq)) wrong")
            }
        }
        // Deliver everything: every job ends, finished or cancelled, exactly once.
        for job in issued {
            for index in 0..<Self.emitsPerJob {
                let progress = try sequencer.apply(job: job, emitIndex: index, mutation: .log("\(job):\(index)"))
                observed.saw(progress.applied)
                observed.ended(finished: progress.finished, cancelled: [], completing: progress.completedActions)
            }
            let progress = try sequencer.complete(job: job, emitCount: Self.emitsPerJob)
            observed.saw(progress.applied)
            observed.ended(finished: progress.finished, cancelled: [], completing: progress.completedActions)
        }
        #expect(observed.failures == [], "seed \(seed)")
        #expect(sequencer.openJobCount == 0, "seed \(seed)")
        #expect(observed.finished.union(observed.cancelled) == Set(issued), "seed \(seed)")
        #expect(observed.finished.isDisjoint(with: observed.cancelled))
        #expect(observed.openJobs.isEmpty, "seed \(seed)")
        #expect(observed.completed == Set(issued.map(\.actionSeq)), "seed \(seed)")
        #expect(sequencer.state.log == observed.log)
        #expect(sequencer.version == observed.version)
        // Finished jobs applied every emit; cancelled ones never more than before their cancel.
        for job in observed.finished { #expect(observed.nextEmit[job] == Self.emitsPerJob, "\(job), seed \(seed)") }
        #expect(!observed.cancelled.isEmpty, "seed \(seed) cancelled nothing: the test would prove little")
    }
}
