/// A reactor running in one process: the embedded default and the reference semantics.
///
/// The store drives a ``Sequencer`` and runs each effect as a task with an ``EffectRunner``, so a
/// program gets exactly what the distributed runtime gives (ordering, exactly-once application,
/// retries, the failure hook), without sockets. Subscribers get an `AsyncStream` of snapshots
/// that starts with the current one.
public actor Store<R: Reactor, Handler: EffectHandler> where Handler.Effect == R.Effect, Handler.Mutation == R.Mutation {
    private var sequencer: Sequencer<R>
    private let runner: EffectRunner<Handler>
    private var running: [JobID: Task<Void, Never>] = [:]
    private var subscribers: [Int: AsyncStream<Snapshot<R.State>>.Continuation] = [:]
    private var nextSubscriber = 0
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private var isShutDown = false
    /// Runs subscriptions; `nil` when the store was given no handler.
    private let subscriptionRunner: SubscriptionRunner<R.Subscription, R.Action>?
    /// One task per running subscription run, by run number.
    private var subscriptionTasks: [UInt64: Task<Void, Never>] = [:]

    /// Subscription events dropped because their run had stopped or they arrived twice.
    public private(set) var droppedEvents = 0

    /// Events the sequencer refused (an emit for an unknown job): zero unless a handler misbehaves.
    public private(set) var refusedEvents = 0

    /// Creates a store at the reactor's initial state.
    /// - Parameters:
    ///   - reactor: the app.
    ///   - effects: runs the app's effects.
    ///   - retry: attempts, backoff and timeout for each effect.
    ///   - middlewares: see every applied mutation.
    ///   - clock: what the effects wait on (``EffectClock/current`` in their tasks), e.g. a test's
    ///     own clock; `nil`: a `ContinuousClock`, unless the task that sends an action binds one.
    public init(reactor: R, effects: Handler, retry: RetryPolicy = .standard, middlewares: [any Middleware<R>] = [],
                clock: (any Clock<Duration>)? = nil) {
        self.init(reactor: reactor, effects: effects, subscriptionRunner: nil, retry: retry, middlewares: middlewares, clock: clock)
    }

    /// Creates a store at the reactor's initial state that also runs the reactor's
    /// subscriptions (``Reactor/subscriptions(state:)``): each run as a task, started when it
    /// enters the state's list (the initial state's at once) and cancelled when it leaves.
    /// - Parameters:
    ///   - reactor: the app.
    ///   - effects: runs the app's effects.
    ///   - subscriptions: runs the app's subscriptions; their events are sent as actions.
    ///   - retry: attempts, backoff and timeout for each effect; the backoff before a
    ///     subscription's handler runs again after it returned or threw.
    ///   - middlewares: see every applied mutation.
    ///   - clock: what the effects and subscriptions wait on (see the other initializer).
    public init<S: SubscriptionHandler>(reactor: R, effects: Handler, subscriptions: S, retry: RetryPolicy = .standard,
                                        middlewares: [any Middleware<R>] = [], clock: (any Clock<Duration>)? = nil)
        where S.Subscription == R.Subscription, S.Action == R.Action {
        self.init(reactor: reactor, effects: effects,
                  subscriptionRunner: SubscriptionRunner(handler: subscriptions, policy: retry, clock: clock),
                  retry: retry, middlewares: middlewares, clock: clock)
    }

    private init(reactor: R, effects: Handler, subscriptionRunner: SubscriptionRunner<R.Subscription, R.Action>?, retry: RetryPolicy,
                 middlewares: [any Middleware<R>], clock: (any Clock<Duration>)?) {
        var sequencer = Sequencer(reactor: reactor, middlewares: middlewares)
        // Transforms: the reactor's initial mutations and actions, applied once, now.
        let prelude = sequencer.start()?.jobs ?? []
        self.sequencer = sequencer
        self.runner = EffectRunner(handler: effects, policy: retry, clock: clock)
        self.subscriptionRunner = subscriptionRunner
        if !prelude.isEmpty || subscriptionRunner != nil { Task { await self.startPrelude(prelude) } }
    }

    /// Starts the jobs of the reactor's initial actions and the subscriptions the state wants
    /// (unless the store was shut down first).
    private func startPrelude(_ jobs: [Job<R.Effect>]) {
        guard !isShutDown else { return }
        for job in jobs { start(job) }
        if subscriptionRunner != nil { startInitialSubscriptions() }
    }

    /// The current state.
    public var state: R.State { sequencer.state }

    /// The number of mutations applied so far.
    public var version: UInt64 { sequencer.version }

    /// The current state and version.
    public var snapshot: Snapshot<R.State> { Snapshot(version: sequencer.version, state: sequencer.state) }

    /// Sends an action: applies its sync mutations now and starts its effects.
    @discardableResult
    public func send(_ action: R.Action) -> Receipt<R.State> {
        let before = sequencer.version
        let acceptance = sequencer.accept(action)
        if sequencer.version != before { publish() }
        if !acceptance.cancelled.isEmpty { stopCancelled(acceptance.cancelled) }
        if !isShutDown {
            for job in acceptance.jobs { start(job) }
        }
        applySubscriptionChanges()
        return Receipt(actionSeq: acceptance.actionSeq, version: acceptance.version, state: sequencer.state, jobs: acceptance.jobs.map(\.id))
    }

    /// Snapshots from now on, starting with the current one.
    ///
    /// - Parameter bufferingPolicy: what to keep for a subscriber that reads slower than the
    ///   store changes. `.unbounded` (the default) delivers every version; `.bufferingNewest(1)`
    ///   keeps only the latest.
    public func updates(
        bufferingPolicy: AsyncStream<Snapshot<R.State>>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Snapshot<R.State>> {
        let (stream, continuation) = AsyncStream.makeStream(of: Snapshot<R.State>.self, bufferingPolicy: bufferingPolicy)
        continuation.yield(snapshot)
        if isShutDown {
            continuation.finish()
            return stream
        }
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    /// The number of live subscriptions.
    public var subscriberCount: Int { subscribers.count }

    /// Returns once no effect is running or waiting to be applied.
    public func waitUntilIdle() async {
        if isIdle { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    /// Cancels running effects and ends every subscription. Idempotent.
    public func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        for task in running.values { task.cancel() }
        for task in subscriptionTasks.values { task.cancel() }
        subscriptionTasks.removeAll()
        for continuation in subscribers.values { continuation.finish() }
        subscribers.removeAll()
    }

    // MARK: Effects

    private var isIdle: Bool { running.isEmpty && sequencer.openJobCount == 0 }

    private func start(_ job: Job<R.Effect>) {
        let runner = self.runner
        let id = job.id
        running[id] = Task {
            let outcome = await runner.run(job.effect) { [weak self] emitIndex, mutation in
                await self?.receive(id, emitIndex: emitIndex, mutation: mutation)
            }
            self.finish(id, outcome: outcome)
        }
    }

    /// Cancels the tasks of jobs the sequencer cancelled: the handler sees task cancellation,
    /// and whatever the task still emits or reports is dropped by the sequencer (a spent job).
    private func stopCancelled(_ jobs: [JobID]) {
        for job in jobs { running.removeValue(forKey: job)?.cancel() }
        resumeIdleWaitersIfIdle()
    }

    private func receive(_ job: JobID, emitIndex: UInt32, mutation: R.Mutation) {
        record { sequencer in try sequencer.apply(job: job, emitIndex: emitIndex, mutation: mutation) }
    }

    private func finish(_ job: JobID, outcome: EffectOutcome) {
        running[job] = nil
        switch outcome {
        case .done(let count):
            record { sequencer in try sequencer.complete(job: job, emitCount: count) }
        case .failed(let failure):
            record { sequencer in try sequencer.fail(job: job, error: failure) }
        }
        resumeIdleWaitersIfIdle()
    }

    private func resumeIdleWaitersIfIdle() {
        if isIdle {
            let waiters = idleWaiters
            idleWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
        }
    }

    private func record(_ event: (inout Sequencer<R>) throws -> Progress<R.Mutation>) {
        do {
            let progress = try event(&sequencer)
            if !progress.applied.isEmpty { publish() }
        } catch {
            refusedEvents += 1
        }
        applySubscriptionChanges()
    }

    // MARK: Subscriptions

    /// The number of subscription runs whose handler task is running.
    public var runningSubscriptionCount: Int { subscriptionTasks.count }

    /// Starts a task for every run the state wants now (those started before are skipped).
    private func startInitialSubscriptions() {
        guard !isShutDown else { return }
        _ = sequencer.takeSubscriptionChanges()
        for run in sequencer.runningSubscriptions where subscriptionTasks[run.run] == nil { startSubscription(run) }
    }

    /// Cancels the runs the last events stopped and starts the ones they started.
    private func applySubscriptionChanges() {
        let changes = sequencer.takeSubscriptionChanges()
        guard !changes.isEmpty, subscriptionRunner != nil else { return }
        for run in changes.stopped { subscriptionTasks.removeValue(forKey: run.run)?.cancel() }
        guard !isShutDown else { return }
        for run in changes.started { startSubscription(run) }
    }

    private func startSubscription(_ run: SubscriptionRun<R.Subscription>) {
        guard let runner = subscriptionRunner else { return }
        let number = run.run
        subscriptionTasks[number] = Task {
            await runner.run(run.subscription, resumingAfter: run.lastAppliedEvent) { [weak self] index, action in
                await self?.receive(event: action, index: index, run: number)
            }
        }
    }

    private func receive(event action: R.Action, index: UInt64, run: UInt64) {
        do {
            let receipt = try sequencer.receive(event: action, index: index, run: run)
            switch receipt.disposition {
            case .duplicate, .stale: droppedEvents += 1
            case .applied, .buffered: break
            }
            if receipt.accepted.contains(where: { !$0.applied.isEmpty }) { publish() }
            // An event's action cancels effects as a sent action does.
            for acceptance in receipt.accepted where !acceptance.cancelled.isEmpty { stopCancelled(acceptance.cancelled) }
            if !isShutDown {
                for acceptance in receipt.accepted {
                    for job in acceptance.jobs { start(job) }
                }
            }
        } catch {
            refusedEvents += 1
        }
        applySubscriptionChanges()
    }

    private func publish() {
        let current = snapshot
        for continuation in subscribers.values { continuation.yield(current) }
    }

    private func unsubscribe(_ id: Int) {
        subscribers[id] = nil
    }
}
