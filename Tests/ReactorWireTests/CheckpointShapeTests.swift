import MessagePack
import ReactorCore
import Testing

/// The job ledger inside a checkpoint keeps the shape every release so far wrote to disk (each
/// open job as `{effect, lane, nextEmit, buffered, declaredCount, failure}` under `open`), however
/// the sequencer keeps it in memory: snapshots written before and after must read the same.
@Suite struct CheckpointShapeTests {
    /// A reactor whose every effect runs in one lane, so a checkpoint can hold a lane, a buffered
    /// emit, a held DONE and a held FAILED.
    struct Laned: Reactor {
        struct State: Codable, Equatable, Sendable { var log: [Int] = [] }
        enum Action: Codable, Sendable { case run(Int) }
        enum Mutation: Codable, Equatable, Sendable { case logged(Int) }
        enum Effect: Codable, Equatable, Sendable { case step(Int) }

        var initialState: State { State() }
        func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
            guard case .run(let value) = action else { return .none }
            return Mutations(async: .step(value))
        }
        func reduce(state: inout State, mutation: Mutation) {
            guard case .logged(let value) = mutation else { return }
            state.log.append(value)
        }
        func failed(effect: Effect, error: EffectFailure) -> [Mutation] { [.logged(-1)] }
        func lane(for effect: Effect) -> String? { "steps" }
    }

    /// The ledger as releases up to this one declared it, with the synthesised `Codable` they
    /// had: the format the test holds the current one to.
    struct StoredLedger: Codable {
        struct OpenJob: Codable {
            var effect: Laned.Effect
            var lane: String?
            var nextEmit: UInt32 = 0
            var buffered: [UInt32: Laned.Mutation] = [:]
            var declaredCount: UInt32?
            var failure: EffectFailure?
        }
        struct ActionJobs: Codable {
            var effectCount: UInt32
            var remaining: UInt32
        }
        var open: [JobID: OpenJob] = [:]
        var actions: [UInt64: ActionJobs] = [:]
        var lanes: [String: [JobID]] = [:]
    }

    let encoder = MessagePackEncoder()

    func ledger(of sequencer: Sequencer<Laned>) throws -> MessagePackValue? {
        try value(of: sequencer.checkpoint())["ledger"]
    }

    /// `value` encoded, read back as a MessagePack value.
    func value(of encodable: some Encodable) throws -> MessagePackValue {
        try MessagePackValue(unpacking: encoder.encode(encodable))
    }

    /// Accepts two actions: two open jobs, `first` ahead of `second` in the lane.
    func acceptTwoJobs(into sequencer: inout Sequencer<Laned>) -> (first: JobID, second: JobID) {
        _ = sequencer.accept(.run(1))
        _ = sequencer.accept(.run(2))
        return (JobID(actionSeq: 1, effectIndex: 0), JobID(actionSeq: 2, effectIndex: 0))
    }

    @Test func anOpenJobWithABufferedEmitIsStoredInTheReleasedShape() throws {
        var sequencer = Sequencer(reactor: Laned())
        _ = sequencer.accept(.run(1))
        let job = JobID(actionSeq: 1, effectIndex: 0)
        // Emit 1 before emit 0: buffered; then the DONE for two emits, held behind the gap.
        #expect(try sequencer.apply(job: job, emitIndex: 1, mutation: .logged(11)).disposition == .buffered)
        #expect(try sequencer.complete(job: job, emitCount: 2).disposition == .buffered)

        var expected = StoredLedger()
        expected.open[job] = .init(effect: .step(1), lane: "steps", buffered: [1: .logged(11)], declaredCount: 2)
        expected.actions[1] = .init(effectCount: 1, remaining: 1)
        expected.lanes["steps"] = [job]
        #expect(try ledger(of: sequencer) == value(of: expected))
    }

    @Test func aJobHeldBehindItsLaneWithAFailureIsStoredInTheReleasedShape() throws {
        var sequencer = Sequencer(reactor: Laned())
        let (first, second) = acceptTwoJobs(into: &sequencer)
        _ = try sequencer.apply(job: first, emitIndex: 0, mutation: .logged(10))
        #expect(try sequencer.fail(job: second, error: EffectFailure(message: "no", attempts: 3)).disposition == .buffered)

        var expected = StoredLedger()
        expected.open[first] = .init(effect: .step(1), lane: "steps", nextEmit: 1)
        expected.actions[1] = .init(effectCount: 1, remaining: 1)
        expected.lanes["steps"] = [first, second]
        let stored = try #require(try ledger(of: sequencer))
        // Two open jobs: compare job by job (a dictionary's order is not fixed).
        let open = try #require(stored["open"].flatMap { value -> [MessagePackValue]? in
            if case .array(let items) = value { return items }
            return nil
        })
        #expect(open.count == 4)
        var jobs: [MessagePackValue: MessagePackValue] = [:]
        for index in stride(from: 0, to: open.count - 1, by: 2) { jobs[open[index]] = open[index + 1] }
        let secondJob = StoredLedger.OpenJob(effect: .step(2), lane: "steps", failure: EffectFailure(message: "no", attempts: 3))
        #expect(jobs[try value(of: first)] == (try value(of: expected.open[first])))
        #expect(jobs[try value(of: second)] == (try value(of: secondJob)))
        #expect(stored["lanes"] == (try value(of: expected.lanes)))
    }

    @Test func aLedgerInTheReleasedShapeRestoresEveryWaitingResult() throws {
        var sequencer = Sequencer(reactor: Laned())
        let (first, second) = acceptTwoJobs(into: &sequencer)
        _ = try sequencer.apply(job: second, emitIndex: 0, mutation: .logged(20))
        _ = try sequencer.apply(job: first, emitIndex: 1, mutation: .logged(11))
        let bytes = try encoder.encode(sequencer.checkpoint())

        var restored = Sequencer(reactor: Laned(), restoring: try MessagePackDecoder().decode(SequencerCheckpoint<Laned>.self, from: bytes))
        #expect(try restored.apply(job: first, emitIndex: 1, mutation: .logged(11)).disposition == .duplicate)
        #expect(restored.receivedEmits(of: first) == 0)
        #expect(restored.receivedEmits(of: second) == 1)
        #expect(try restored.apply(job: first, emitIndex: 0, mutation: .logged(10)).disposition == .applied)
        let done = try restored.complete(job: first, emitCount: 2)
        #expect(done.finished == [first])
        let next = try restored.complete(job: second, emitCount: 1)
        #expect(next.finished == [second])
        #expect(restored.state.log == [10, 11, 20])
        #expect(restored.openJobCount == 0)
        #expect(try restored.apply(job: second, emitIndex: 0, mutation: .logged(20)).disposition == .duplicate)
    }
}
