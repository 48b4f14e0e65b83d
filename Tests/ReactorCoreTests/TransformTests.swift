import Testing
@testable import ReactorCore

/// SwiftReactor's `TransformCountingReactor`: `transform(action:)` prepends `countUpTwo` and
/// merges `countUpAsync`, `transform(mutation:)` prepends `countUp`. Here they are the initial
/// actions and mutations, applied once when the state is fresh.
struct TransformCountingReactor: Reactor {
    enum Action: Codable, Sendable, Equatable { case countUp, countUpTwo, countUpAsync }
    enum Mutation: Codable, Sendable, Equatable { case countUp, countUpTwo }
    enum Effect: Codable, Sendable, Equatable { case countUp }
    struct State: Codable, Sendable, Equatable { var currentCount = 0 }

    var initialState: State { State() }
    var initialActions: [Action] { [.countUpTwo, .countUpAsync] }
    var initialMutations: [Mutation] { [.countUp] }

    func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .countUp: [.countUp]
        case .countUpTwo: [.countUpTwo]
        case .countUpAsync: Mutations(async: .countUp)
        }
    }

    func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .countUp: state.currentCount += 1
        case .countUpTwo: state.currentCount += 2
        }
    }
}

struct TransformCountingEffects: EffectHandler {
    /// Awaited before the effect emits: a test that reads the state the store's init left holds
    /// it until then, as the initial action's effect runs in a task of its own.
    var hold: @Sendable () async -> Void = {}

    func run(_ effect: TransformCountingReactor.Effect, emit: Emitter<TransformCountingReactor.Mutation>) async throws {
        await hold()
        await emit(.countUp)
    }
}

/// A reactor whose `transform(action:)` maps, expands and drops actions.
struct ExpandingReactor: Reactor {
    enum Action: Codable, Sendable, Equatable {
        case add(Int)
        /// Two `add(1)`.
        case double
        /// Dropped.
        case ignored
        /// `add(n)` then `record`: `record` must see the state after `add`.
        case addAndRecord(Int)
        case record
        /// Two effects from two expanded actions.
        case twoJobs
        case job(String)
    }
    enum Mutation: Codable, Sendable, Equatable { case added(Int), recorded(Int), done(String) }
    enum Effect: Codable, Sendable, Equatable { case work(String) }
    struct State: Codable, Sendable, Equatable {
        var total = 0
        var records: [Int] = []
        var done: [String] = []
    }

    var initialState: State { State() }

    func transform(action: Action) -> [Action] {
        switch action {
        case .double: [.add(1), .add(1)]
        case .ignored: []
        case .addAndRecord(let n): [.add(n), .record]
        case .twoJobs: [.job("a"), .job("b")]
        default: [action]
        }
    }

    func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .add(let n): [.added(n)]
        case .record: [.recorded(state.total)]
        case .job(let name): Mutations(async: .work(name))
        case .double, .ignored, .addAndRecord, .twoJobs: .none
        }
    }

    func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .added(let n): state.total += n
        case .recorded(let n): state.records.append(n)
        case .done(let name): state.done.append(name)
        }
    }
}

@Suite struct TransformTests {
    // MARK: Initial actions and mutations

    @Test func transformCountingReactorCountsFiveAfterPrependAndMerge() async {
        let (released, release) = AsyncStream<Void>.makeStream()
        let store = Store(reactor: TransformCountingReactor(), effects: TransformCountingEffects(hold: { for await _ in released {} }))
        // At init: the prepended mutation (1) and the prepended action's (2), as one action.
        #expect(await store.state.currentCount == 3)
        #expect(await store.version == 2)
        release.finish()
        let receipt = await store.send(.countUp)
        #expect(receipt.actionSeq == 2)
        await store.waitUntilIdle()
        #expect(await store.state.currentCount == 5)
        #expect(await store.version == 4)
        #expect(await store.refusedEvents == 0)
    }

    @Test func startAppliesInitialMutationsThenActionsAsActionOne() throws {
        var sequencer = Sequencer(reactor: TransformCountingReactor())
        #expect(sequencer.isFresh)
        let started = sequencer.start()
        let acceptance = try #require(started)
        #expect(acceptance.actionSeq == 1)
        #expect(acceptance.version == 2)
        #expect(acceptance.applied.map(\.mutation) == [.countUp, .countUpTwo])
        #expect(acceptance.applied.map(\.origin) == [.sync(index: 0), .sync(index: 1)])
        #expect(acceptance.jobs.map(\.id) == [JobID(actionSeq: 1, effectIndex: 0)])
        #expect(!sequencer.isFresh)
        let again = sequencer.start()
        #expect(again == nil)
        #expect(sequencer.actionSeq == 1)
        #expect(sequencer.state.currentCount == 3)
    }

    @Test func startDoesNothingOnceAnActionWasAccepted() {
        var sequencer = Sequencer(reactor: TransformCountingReactor())
        _ = sequencer.accept(.countUp)
        let again = sequencer.start()
        #expect(again == nil)
        #expect(sequencer.state.currentCount == 1)
        #expect(sequencer.actionSeq == 1)
    }

    @Test func startDoesNothingForAReactorWithoutInitialValues() {
        var sequencer = Sequencer(reactor: ExpandingReactor())
        let again = sequencer.start()
        #expect(again == nil)
        #expect(sequencer.isFresh)
        #expect(sequencer.actionSeq == 0)
    }

    @Test func initialValuesAreNotAppliedAgainAfterCheckpointRestore() throws {
        var sequencer = Sequencer(reactor: TransformCountingReactor())
        let started = sequencer.start()
        let jobs = try #require(started).jobs
        let restored = Sequencer(reactor: TransformCountingReactor(), restoring: sequencer.checkpoint())
        var copy = restored
        let again = copy.start()
        #expect(again == nil)
        #expect(copy.state.currentCount == 3)
        #expect(copy.openJobCount == 1)
        // The initial action's job still completes exactly once after the restore.
        let progress = try copy.apply(job: jobs[0].id, emitIndex: 0, mutation: .countUp)
        #expect(progress.disposition == .applied)
        #expect(try copy.complete(job: jobs[0].id, emitCount: 1).finished == [jobs[0].id])
        #expect(copy.state.currentCount == 4)
    }

    @Test func replayingStartAndActionsReproducesStateAndBookkeeping() throws {
        func run(_ sequencer: inout Sequencer<TransformCountingReactor>) throws {
            _ = sequencer.start()
            _ = sequencer.accept(.countUpAsync)
            _ = try sequencer.apply(job: JobID(actionSeq: 2, effectIndex: 0), emitIndex: 0, mutation: .countUp)
        }
        var first = Sequencer(reactor: TransformCountingReactor())
        try run(&first)
        var replayed = Sequencer(reactor: TransformCountingReactor())
        try run(&replayed)
        #expect(replayed.state == first.state)
        #expect(replayed.version == first.version)
        #expect(replayed.actionSeq == first.actionSeq)
        #expect(replayed.unreportedJobs.map(\.id) == first.unreportedJobs.map(\.id))
        #expect(first.unreportedJobs.map(\.id) == [JobID(actionSeq: 1, effectIndex: 0), JobID(actionSeq: 2, effectIndex: 0)])
    }

    // MARK: Action transform

    @Test func anExpandedActionIsOneActionWithItsMutationsNumberedInOrder() {
        var sequencer = Sequencer(reactor: ExpandingReactor())
        let acceptance = sequencer.accept(.double)
        #expect(acceptance.actionSeq == 1)
        #expect(acceptance.version == 2)
        #expect(acceptance.applied.map(\.mutation) == [.added(1), .added(1)])
        #expect(acceptance.applied.map(\.origin) == [.sync(index: 0), .sync(index: 1)])
        #expect(acceptance.applied.map(\.actionSeq) == [1, 1])
        #expect(sequencer.state.total == 2)
    }

    @Test func eachExpandedActionSeesTheStateItsPredecessorsLeft() {
        var sequencer = Sequencer(reactor: ExpandingReactor())
        _ = sequencer.accept(.add(10))
        _ = sequencer.accept(.addAndRecord(5))
        #expect(sequencer.state.records == [15])
        #expect(sequencer.version == 3)
        #expect(sequencer.actionSeq == 2)
    }

    @Test func aDroppedActionStillTakesItsSequenceNumberAndChangesNothing() {
        var sequencer = Sequencer(reactor: ExpandingReactor())
        let acceptance = sequencer.accept(.ignored)
        #expect(acceptance.actionSeq == 1)
        #expect(acceptance.applied.isEmpty)
        #expect(acceptance.jobs.isEmpty)
        #expect(sequencer.version == 0)
        #expect(sequencer.accept(.add(1)).actionSeq == 2)
    }

    @Test func effectsOfExpandedActionsAreJobsOfOneActionInOrder() throws {
        var sequencer = Sequencer(reactor: ExpandingReactor())
        let acceptance = sequencer.accept(.twoJobs)
        #expect(acceptance.jobs.map(\.id) == [JobID(actionSeq: 1, effectIndex: 0), JobID(actionSeq: 1, effectIndex: 1)])
        #expect(acceptance.jobs.map(\.effect) == [.work("a"), .work("b")])
        _ = try sequencer.apply(job: acceptance.jobs[1].id, emitIndex: 0, mutation: .done("b"))
        _ = try sequencer.complete(job: acceptance.jobs[1].id, emitCount: 1)
        #expect(sequencer.hasOpenJobs(actionSeq: 1))
        // A third effect index of the action was never issued.
        #expect(throws: SequencerError.unknownJob(JobID(actionSeq: 1, effectIndex: 2))) {
            try sequencer.complete(job: JobID(actionSeq: 1, effectIndex: 2), emitCount: 0)
        }
        _ = try sequencer.complete(job: acceptance.jobs[0].id, emitCount: 0)
        #expect(!sequencer.hasOpenJobs(actionSeq: 1))
        #expect(sequencer.state.done == ["b"])
    }

    // MARK: Projections

    @Test func aStoreProjectionYieldsOnlyChanges() async throws {
        let records = Projection<ExpandingReactor.State, Int>("records") { $0.records.count }
        let store = Store(reactor: ExpandingReactor(), effects: ExpandingEffects())
        let stream = await store.updates(of: records)
        var iterator = stream.makeAsyncIterator()
        await store.send(.add(1))          // version 1: no change
        await store.send(.record)          // version 2: 1
        await store.send(.add(2))          // version 3: no change
        await store.send(.double)          // versions 4, 5: no change
        await store.send(.record)          // version 6: 2
        var seen: [Snapshot<Int>] = []
        for _ in 0..<3 {
            if let next = await iterator.next() { seen.append(next) }
        }
        #expect(seen == [Snapshot(version: 0, state: 0), Snapshot(version: 2, state: 1), Snapshot(version: 6, state: 2)])
        await store.shutdown()
    }
}

/// A handler for a reactor whose effects are never run in a test.
struct ExpandingEffects: EffectHandler {
    func run(_ effect: ExpandingReactor.Effect, emit: Emitter<ExpandingReactor.Mutation>) async throws {
        if case .work(let name) = effect { await emit(.done(name)) }
    }
}
