import ReactorCore

/// An exhaustive test of a reactor: send actions, receive every mutation, account for every
/// effect, and state how each one changes the state.
///
/// ```swift
/// let store = TestStore(reactor: Counter())
/// store.send(.countUp) { $0.count = 1 }                 // the action's sync mutations
/// store.send(.countUpAsync)                             // no change yet: an effect was requested
/// store.expectEffect(.slowIncrease, emitting: [.increase])   // stub it ...
/// store.receive(.increase) { $0.count = 2 }             // ... and receive what it emitted
/// store.send(.countUpAsync)
/// await store.runEffects(with: CounterEffects())        // or run it with the real handler
/// store.receive(.increase) { $0.count = 3 }
/// store.finish()
/// ```
///
/// The store drives the same ``Sequencer`` as the authority, so what a test receives, and in
/// which order, is what the distributed run applies: an action's sync mutations first, a job's
/// emits in emit order, the results of a lane's jobs in action order whatever order they end in,
/// and a failed job's emitted mutations then its `failed(effect:error:)` mutations.
///
/// Exhaustive by default. The test fails
/// - when a `send` or `receive` closure does not describe the state change exactly (no closure
///   means "no change"), with a `−` expected / `+` actual diff of the state;
/// - when `receive` finds another mutation, or none;
/// - when an action is sent while applied mutations have not been received;
/// - when `finish()` (or the store's deinitialiser) finds mutations not received or effects
///   neither stubbed nor run.
///
/// Effects never run on their own: each requested effect waits until the test stubs it
/// (``expectEffect(_:emitting:failure:fileID:filePath:line:column:)``) or runs it through an
/// ``EffectHandler`` (``runEffects(with:retry:clock:fileID:filePath:line:column:)``). Failures are
/// reported through swift-testing inside a swift-testing test and through XCTest otherwise, at
/// the line of the call that found them.
///
/// Not `Sendable`: a store belongs to the one test that made it.
public final class TestStore<R: Reactor> where R.State: Equatable {
    /// The reactor under test.
    public let reactor: R

    private var sequencer: Sequencer<R>
    private let recorder: MutationRecorder<R>
    /// The state as the test has described it so far.
    private var assertedState: R.State
    /// Mutations applied by effects (emitted or failure) and not received yet, oldest first.
    private var unreceived: [MutationRecorder<R>.Record] = []
    /// Jobs requested and neither stubbed nor run, in request order.
    private var pending: [Job<R.Effect>] = []
    private let origin: SourceSite

    /// Creates a store at `state`, or at the reactor's initial state.
    public init(
        reactor: R,
        state: R.State? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let recorder = MutationRecorder<R>()
        let start = state ?? reactor.initialState
        self.reactor = reactor
        self.recorder = recorder
        self.sequencer = Sequencer(reactor: reactor, state: start, middlewares: [recorder])
        self.assertedState = start
        self.origin = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
    }

    deinit {
        checkExhausted(at: origin)
    }

    /// The current state: every mutation applied so far, received or not.
    public var state: R.State { sequencer.state }

    /// The number of mutations applied so far.
    public var version: UInt64 { sequencer.version }

    /// Effects requested and neither stubbed nor run yet, in request order.
    public var pendingEffects: [R.Effect] { pending.map(\.effect) }

    /// Mutations applied by effects and not received yet, oldest first.
    public var unreceivedMutations: [R.Mutation] { unreceived.map(\.applied.mutation) }

    // MARK: Actions

    /// Sends an action: applies its sync mutations and checks the state they produce.
    ///
    /// Fails first if mutations applied earlier were not received (they are then taken as
    /// received). The action's effects wait to be stubbed or run.
    /// - Parameter updateStateToExpectedResult: changes the state before the action into the
    ///   state expected after its sync mutations; `nil` expects no change.
    public func send(
        _ action: R.Action,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        assert updateStateToExpectedResult: ((inout R.State) throws -> Void)? = nil
    ) {
        let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        if !unreceived.isEmpty {
            IssueReporter.report(
                "Must receive every applied mutation before sending \(describe(action)); not received:\n"
                    + list(unreceived.map(\.applied.mutation)),
                at: site
            )
            skipReceivedMutations()
        }
        let before = assertedState
        let acceptance = sequencer.accept(action)
        _ = recorder.drain()
        pending += acceptance.jobs
        // A cancelled job's effect is accounted for: the closure describes its cancel mutations.
        if !acceptance.cancelled.isEmpty { pending.removeAll { acceptance.cancelled.contains($0.id) } }
        expectState(from: before, updateStateToExpectedResult, actual: sequencer.state, after: "sending \(describe(action))", at: site)
        assertedState = sequencer.state
    }

    /// Applies the reactor's initial mutations and actions (``Reactor/initialMutations``,
    /// ``Reactor/initialActions``), as a fresh `Store` or authority does when it starts, and
    /// checks the state they produce; their effects wait to be stubbed or run.
    ///
    /// A store made at a given `state` starts only if that state is fresh too (nothing sent yet);
    /// a reactor without initial values changes nothing (then the closure must be `nil`).
    public func start(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        assert updateStateToExpectedResult: ((inout R.State) throws -> Void)? = nil
    ) {
        let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        let before = assertedState
        if let acceptance = sequencer.start() { pending += acceptance.jobs }
        _ = recorder.drain()
        expectState(from: before, updateStateToExpectedResult, actual: sequencer.state, after: "starting", at: site)
        assertedState = sequencer.state
    }

    /// The subscriptions the current state wants running (``Reactor/subscriptions(state:)``),
    /// oldest run first: a test checks them after each step and sends their events as actions.
    public var runningSubscriptions: [R.Subscription] { sequencer.runningSubscriptions.map(\.subscription) }

    // MARK: Mutations

    /// Receives the next applied mutation when `isExpected` accepts it, and checks its state.
    ///
    /// For mutation types that are not `Equatable`; others use ``receive(_:fileID:filePath:line:column:assert:)``.
    public func receive(
        where isExpected: (R.Mutation) -> Bool,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        assert updateStateToExpectedResult: ((inout R.State) throws -> Void)? = nil
    ) {
        let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard !unreceived.isEmpty else {
            IssueReporter.report("Expected to receive a mutation, but none was applied.", at: site)
            return
        }
        let mutation = unreceived[0].applied.mutation
        take(isExpected(mutation) ? nil : "Received \(describe(mutation)), which does not match the expectation.",
             updateStateToExpectedResult, at: site)
    }

    /// Receives the oldest unreceived mutation: reports `mismatch` if any (the state is then
    /// not compared, the closure describing another mutation), else checks the state.
    fileprivate func take(_ mismatch: String?, _ update: ((inout R.State) throws -> Void)?, at site: SourceSite) {
        let next = unreceived.removeFirst()
        if let mismatch {
            IssueReporter.report(mismatch, at: site)
        } else {
            expectState(from: assertedState, update, actual: next.state, after: "receiving \(describe(next.applied.mutation))", at: site)
        }
        assertedState = next.state
    }

    /// Takes every applied mutation that was not received as received, without checking it:
    /// for a test that only cares about the state they lead to (compare ``state``).
    public func skipReceivedMutations() {
        unreceived.removeAll()
        assertedState = sequencer.state
    }

    // MARK: Effects

    /// Stubs the pending effect at `index`: the job emits `mutations`, then ends, or fails
    /// for good with `failure`; what the sequencer applies waits to be received.
    func stub(pendingAt index: Int, emitting mutations: [R.Mutation], failure: EffectFailure?, at site: SourceSite) {
        let job = pending.remove(at: index)
        do {
            for (emitIndex, mutation) in mutations.enumerated() {
                _ = try sequencer.apply(job: job.id, emitIndex: UInt32(emitIndex), mutation: mutation)
            }
            if let failure {
                _ = try sequencer.fail(job: job.id, error: failure)
            } else {
                _ = try sequencer.complete(job: job.id, emitCount: UInt32(mutations.count))
            }
        } catch {
            IssueReporter.report("The sequencer refused a result of \(describe(job.effect)): \(error)", at: site)
        }
        collect()
    }

    /// Stubs the first pending effect that `isExpected` accepts (see
    /// ``expectEffect(_:emitting:failure:fileID:filePath:line:column:)``).
    public func expectEffect(
        where isExpected: (R.Effect) -> Bool,
        emitting mutations: [R.Mutation] = [],
        failure: EffectFailure? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let index = pending.firstIndex(where: { isExpected($0.effect) }) else {
            IssueReporter.report("Expected an effect that was requested, but no pending effect matches."
                                 + pendingSummary, at: site)
            return
        }
        stub(pendingAt: index, emitting: mutations, failure: failure, at: site)
    }

    /// Runs every pending effect through `handler`, one after another in request order, with
    /// the runtime's ``EffectRunner`` (attempts, timeout, the failure hook after the last
    /// attempt). Their mutations wait to be received.
    ///
    /// One at a time in request order is one of the orders a distributed run can take; to test
    /// another (a later job of a lane ending first), run or stub effects one by one.
    ///
    /// `clock` is what the effects wait on through `EffectClock` (and the backoff between
    /// attempts): an ``ImmediateClock`` runs an effect that waits a minute at once; `nil` leaves
    /// the test task's `EffectClock.current`, a `ContinuousClock` unless the test bound one.
    public nonisolated(nonsending) func runEffects<Handler: EffectHandler>(
        with handler: Handler,
        retry: RetryPolicy = .once,
        clock: (any Clock<Duration>)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async where Handler.Effect == R.Effect, Handler.Mutation == R.Mutation {
        let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        while !pending.isEmpty {
            await run(pendingAt: 0, with: handler, retry: retry, clock: clock, at: site)
        }
    }

    /// Runs the first pending effect that `isExpected` accepts through `handler` (see
    /// ``runEffects(with:retry:clock:fileID:filePath:line:column:)``).
    public nonisolated(nonsending) func runEffect<Handler: EffectHandler>(
        where isExpected: (R.Effect) -> Bool,
        with handler: Handler,
        retry: RetryPolicy = .once,
        clock: (any Clock<Duration>)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async where Handler.Effect == R.Effect, Handler.Mutation == R.Mutation {
        let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let index = pending.firstIndex(where: { isExpected($0.effect) }) else {
            IssueReporter.report("Expected an effect to run, but no pending effect matches." + pendingSummary, at: site)
            return
        }
        await run(pendingAt: index, with: handler, retry: retry, clock: clock, at: site)
    }

    nonisolated(nonsending) func run<Handler: EffectHandler>(
        pendingAt index: Int, with handler: Handler, retry: RetryPolicy, clock: (any Clock<Duration>)?, at site: SourceSite
    ) async where Handler.Effect == R.Effect, Handler.Mutation == R.Mutation {
        let job = pending.remove(at: index)
        let emits = EmitBuffer<R.Mutation>()
        let outcome = await EffectRunner(handler: handler, policy: retry, clock: clock).run(job.effect) { emits.append($0, $1) }
        do {
            // Retried attempts repeat their emit indices: the sequencer drops the repeats.
            for emit in emits.all {
                _ = try sequencer.apply(job: job.id, emitIndex: emit.index, mutation: emit.mutation)
            }
            switch outcome {
            case .done(let count): _ = try sequencer.complete(job: job.id, emitCount: count)
            case .failed(let failure): _ = try sequencer.fail(job: job.id, error: failure)
            }
        } catch {
            IssueReporter.report("The sequencer refused a result of \(describe(job.effect)): \(error)", at: site)
        }
        collect()
    }

    /// Takes every pending effect as accounted for without running it.
    ///
    /// Its job stays open, as a job whose worker never reports: later jobs of its lane wait.
    public func skipPendingEffects() {
        pending.removeAll()
    }

    // MARK: End

    /// Fails for every mutation not received and every effect neither stubbed nor run, then
    /// takes them as accounted for. The deinitialiser does the same for a test that does not
    /// call it.
    public func finish(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        checkExhausted(at: SourceSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    private func checkExhausted(at site: SourceSite) {
        if !unreceived.isEmpty {
            IssueReporter.report(
                "\(count(unreceived.count, "mutation")) applied but not received:\n" + list(unreceived.map(\.applied.mutation)),
                at: site
            )
            skipReceivedMutations()
        }
        if !pending.isEmpty {
            IssueReporter.report(
                "\(count(pending.count, "effect")) requested but neither stubbed nor run:\n" + list(pending.map(\.effect)),
                at: site
            )
            skipPendingEffects()
        }
    }

    // MARK: Internals

    private func collect() {
        unreceived += recorder.drain()
    }

    private func expectState(
        from before: R.State, _ update: ((inout R.State) throws -> Void)?, actual: R.State, after event: String, at site: SourceSite
    ) {
        var expected = before
        if let update {
            do {
                try update(&expected)
            } catch {
                IssueReporter.report("The state closure after \(event) threw \(error).", at: site)
                return
            }
        }
        guard expected != actual else { return }
        let diff = StateDiff.lines(expected: expected, actual: actual)
            ?? "  (equal renderings: the difference is in what `==` compares but `dump` does not show)"
        IssueReporter.report("State after \(event) differs from the expectation (\u{2212} expected, + actual):\n" + diff, at: site)
    }

    private var pendingSummary: String {
        pending.isEmpty ? " No effect is pending." : " Pending effects:\n" + list(pending.map(\.effect))
    }
}

extension TestStore where R.Mutation: Equatable {
    /// Receives the next applied mutation, which must equal `expected`, and checks its state.
    ///
    /// The next mutation is the oldest applied one not received yet: emitted by an effect or
    /// applied by the failure hook, in the order the sequencer applied them.
    /// - Parameter updateStateToExpectedResult: changes the state before this mutation into the
    ///   state expected after it; `nil` expects no change.
    public func receive(
        _ expected: R.Mutation,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        assert updateStateToExpectedResult: ((inout R.State) throws -> Void)? = nil
    ) {
        let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let actual = unreceived.first?.applied.mutation else {
            IssueReporter.report("Expected to receive \(describe(expected)), but no mutation was applied.", at: site)
            return
        }
        let mismatch = "Received a different mutation (\u{2212} expected, + actual):\n\u{2212} \(describe(expected))\n+ \(describe(actual))"
        take(actual == expected ? nil : mismatch, updateStateToExpectedResult, at: site)
    }
}

extension TestStore where R.Effect: Equatable {
    /// Accounts for a requested effect by stubbing its result: the first pending effect equal
    /// to `effect` emits `mutations` and ends, or, given a `failure`, fails for good after
    /// them (the reactor's `failed(effect:error:)` mutations follow). Fails when no pending
    /// effect equals `effect`.
    ///
    /// Pending effects may be stubbed in any order, which is how a test makes a later job of a
    /// lane end first.
    public func expectEffect(
        _ effect: R.Effect,
        emitting mutations: [R.Mutation] = [],
        failure: EffectFailure? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let index = pending.firstIndex(where: { $0.effect == effect }) else {
            IssueReporter.report("Expected effect \(describe(effect)), but it is not pending." + pendingSummary, at: site)
            return
        }
        stub(pendingAt: index, emitting: mutations, failure: failure, at: site)
    }

    /// Runs the first pending effect equal to `effect` through `handler` (see
    /// ``runEffects(with:retry:clock:fileID:filePath:line:column:)``).
    public nonisolated(nonsending) func runEffect<Handler: EffectHandler>(
        _ effect: R.Effect,
        with handler: Handler,
        retry: RetryPolicy = .once,
        clock: (any Clock<Duration>)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async where Handler.Effect == R.Effect, Handler.Mutation == R.Mutation {
        let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let index = pending.firstIndex(where: { $0.effect == effect }) else {
            IssueReporter.report("Expected effect \(describe(effect)) to run, but it is not pending." + pendingSummary, at: site)
            return
        }
        await run(pendingAt: index, with: handler, retry: retry, clock: clock, at: site)
    }
}

/// A value as a failure message shows it: `increase`, `prime(n: 12, factor: 2)`.
func describe<T>(_ value: T) -> String {
    String(describing: value)
}

/// Values one per line, indented.
func list<T>(_ values: [T]) -> String {
    values.map { "  " + describe($0) }.joined(separator: "\n")
}

/// `1 mutation`, `2 mutations`.
func count(_ number: Int, _ noun: String) -> String {
    "\(number) \(noun)\(number == 1 ? "" : "s")"
}
