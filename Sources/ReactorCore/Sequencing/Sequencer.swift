/// The authority's state machine: owns the state and puts every mutation in its one right place.
///
/// A pure value: events in (`accept`, `apply`, `complete`, `fail`), applied mutations and jobs
/// out. No I/O, no clocks, no threads, so the same type drives the local ``Store``, the
/// distributed authority and journal replay, and is tested with plain values.
///
/// Guarantees:
/// - every applied mutation bumps `version` by one; every accepted action bumps `actionSeq`;
/// - an action's sync mutations are applied at once, in order, before anything else;
/// - a job's emitted mutations are applied in emit-index order, each exactly once: duplicates are
///   dropped, early emits wait for the gap before them to fill;
/// - results of jobs in the same lane are applied in `actionSeq` order: a later job's results
///   wait until every earlier job of the lane has ended;
/// - a job cancelled by an action (see ``Reactor/cancelID(for:)``) ends when that action is
///   accepted: what it applied stays, what it sends later is dropped.
public struct Sequencer<R: Reactor> {
    /// The app.
    public let reactor: R
    /// The current state.
    public var state: R.State { storedState }
    /// The number of mutations applied so far.
    public var version: UInt64 { storedVersion }
    /// The sequence number of the last accepted action (0 before the first).
    public var actionSeq: UInt64 { storedActionSeq }
    // The stored values behind the three above: read-only outside this module, and written by
    // the inlinable per-action code (Reactor+Specialization.swift), which cannot use an
    // `internal(set)` setter.
    @usableFromInline var storedState: R.State
    @usableFromInline var storedVersion: UInt64
    @usableFromInline var storedActionSeq: UInt64
    /// Observers of every applied mutation.
    public var middlewares: [any Middleware<R>]
    /// How far ahead of the applied emits of a job an emit may arrive and still be buffered.
    public let emitWindow: UInt32

    @usableFromInline var ledger: JobLedger<R.Effect, R.Mutation>
    /// Running subscriptions (see `Sequencer+Subscriptions.swift`).
    var subscriptionLedger: SubscriptionLedger<R.Subscription, R.Action>
    /// Runs started and stopped since the runtime last took them.
    var pendingSubscriptionChanges = SubscriptionChanges<R.Subscription>()
    /// Whether the reactor can want subscriptions at all (its `Subscription` is not
    /// ``NoSubscription``, which has no value): decided once, so that a reactor without them pays
    /// nothing for their bookkeeping per action.
    /// The kinds of the plain effect values seen so far (see ``EffectKindMemo``).
    @usableFromInline var kindMemo = EffectKindMemo()
    @usableFromInline let hasSubscriptions = R.Subscription.self != NoSubscription.self

    /// Creates a sequencer at the reactor's initial state, version 0.
    public init(reactor: R, middlewares: [any Middleware<R>] = [], emitWindow: UInt32 = 65_536) {
        self.reactor = reactor
        self.storedState = reactor.initialState
        self.storedVersion = 0
        self.storedActionSeq = 0
        self.middlewares = middlewares
        self.emitWindow = emitWindow
        self.ledger = JobLedger()
        self.subscriptionLedger = SubscriptionLedger()
        resetSubscriptions()
    }

    /// Creates a sequencer at `state`, version 0: a test that starts from a state of its own
    /// (see ReactorTesting's `TestStore`) without replaying the actions that lead there.
    public init(reactor: R, state: R.State, middlewares: [any Middleware<R>] = [], emitWindow: UInt32 = 65_536) {
        self.init(reactor: reactor, middlewares: middlewares, emitWindow: emitWindow)
        self.storedState = state
        resetSubscriptions()
    }

    /// The number of jobs that have not ended.
    public var openJobCount: Int { ledger.open.count }

    // MARK: Events

    /// Accepts an action: gives it the next `actionSeq`, applies its sync mutations, cancels the
    /// jobs it cancels (see ``Reactor/cancelID(for:)``) and returns the jobs to run.
    public mutating func accept(_ action: R.Action) -> Acceptance<R.Mutation, R.Effect> {
        R._sequencerAccept(action, in: &self)
    }

    /// ``accept(_:)``'s work, inlinable so that ``Reactor/_sequencerAccept(_:in:)`` compiles it
    /// for each reactor (see Reactor+Specialization.swift).
    @inlinable
    mutating func acceptSpecialized(_ action: R.Action) -> Acceptance<R.Mutation, R.Effect> {
        storedActionSeq += 1
        let seq = storedActionSeq
        // Transforms: the actions `transform(action:)` makes of it, each mutated and its sync
        // mutations applied in turn (Sequencer+Transforms.swift); `mutations.sync` is applied.
        var applied: [AppliedMutation<R.Mutation>] = []
        let mutations = mutateTransformed(action, actionSeq: seq, applied: &applied)
        let jobs = issueJobs(actionSeq: seq, effects: mutations.async)
        var acceptance = Acceptance(actionSeq: seq, version: storedVersion, applied: applied, jobs: jobs)
        // Cancellation: see Sequencer+Cancellation.swift.
        if !mutations.cancel.isEmpty || !jobs.isEmpty { cancel(mutations.cancel, into: &acceptance) }
        // Subscriptions: see Sequencer+Subscriptions.swift.
        updateSubscriptions()
        return acceptance
    }

    /// Applies the `emitIndex`-th mutation emitted by `job`, exactly once and in emit order.
    ///
    /// - Throws: ``SequencerError/unknownJob(_:)`` for a job that was never issued,
    ///   ``SequencerError/emitOutOfWindow(job:emitIndex:window:)`` for an index too far ahead.
    ///   A refused event changes nothing.
    public mutating func apply(job id: JobID, emitIndex: UInt32, mutation: R.Mutation) throws(SequencerError) -> Progress<R.Mutation> {
        try R._sequencerApply(job: id, emitIndex: emitIndex, mutation: mutation, in: &self)
    }

    /// ``apply(job:emitIndex:mutation:)``'s work, compiled for each reactor.
    @inlinable
    mutating func applySpecialized(job id: JobID, emitIndex: UInt32, mutation: R.Mutation) throws(SequencerError) -> Progress<R.Mutation> {
        guard var job = ledger.open[id] else { return try spent(id) }
        if emitIndex < job.nextEmit || ledger.isBuffered(job: id, emitIndex: emitIndex, progress: job) {
            return Progress(.duplicate)
        }
        guard emitIndex - job.nextEmit < emitWindow else {
            throw .emitOutOfWindow(job: id, emitIndex: emitIndex, window: emitWindow)
        }
        guard emitIndex == job.nextEmit, ledger.isReady(id, job) else {
            ledger.buffer(mutation, job: id, emitIndex: emitIndex)
            return Progress(.buffered)
        }
        // Its turn: applied at once (never through the buffer), then whatever it lets through.
        var progress = Progress<R.Mutation>(.applied)
        progress.applied.append(reduce(mutation, actionSeq: id.actionSeq, origin: .async(job: id, emitIndex: emitIndex)))
        // In place, not `ledger.open[id]?.nextEmit += 1`: that accessor moves the job out and
        // back in a frame too large for the caller's buffer, a `malloc` per mutation.
        job.nextEmit += 1
        ledger.open.update(id) { $0.nextEmit = job.nextEmit }
        // The job's progress goes along: settle does not look it up again.
        settle(id, job, into: &progress)
        return progress
    }

    /// Ends a job whose effect returned after emitting `emitCount` mutations.
    ///
    /// The job ends once all `emitCount` mutations are applied and, in a lane, every earlier job
    /// has ended; until then the DONE is held (disposition `.buffered`).
    public mutating func complete(job id: JobID, emitCount: UInt32) throws(SequencerError) -> Progress<R.Mutation> {
        try R._sequencerComplete(job: id, emitCount: emitCount, in: &self)
    }

    /// ``complete(job:emitCount:)``'s work, compiled for each reactor.
    @inlinable
    mutating func completeSpecialized(job id: JobID, emitCount: UInt32) throws(SequencerError) -> Progress<R.Mutation> {
        guard var job = ledger.open[id] else { return try spent(id) }
        guard !job.isReported else { return Progress(.duplicate) }
        job.declaredCount = emitCount
        ledger.open.update(id) { $0.declaredCount = emitCount }
        return settleIfReady(id, job)
    }

    /// Ends a job whose effect failed for good: applies its contiguous emitted mutations, then
    /// the reactor's `failed(effect:error:)` mutations.
    public mutating func fail(job id: JobID, error: EffectFailure) throws(SequencerError) -> Progress<R.Mutation> {
        guard var job = ledger.open[id] else { return try spent(id) }
        guard !job.isReported else { return Progress(.duplicate) }
        job.failed = true
        ledger.failures[id] = error
        ledger.open[id] = job
        return settleIfReady(id, job)
    }

    // MARK: Queries

    /// The open job with this identity, if any.
    public func job(_ id: JobID) -> Job<R.Effect>? {
        guard let job = ledger.open[id], let effect = ledger.effects[id] else { return nil }
        return Job(id: id, effect: effect, kind: reactor.kind(of: effect), lane: ledger.lane(of: id, job))
    }

    /// The effect of the open job with this identity, if any (``job(_:)`` without working out
    /// its kind and lane again).
    public func openEffect(_ id: JobID) -> R.Effect? { R._sequencerOpenEffect(id, in: self) }

    /// ``openEffect(_:)``'s work, compiled for each reactor (see Reactor+Specialization.swift).
    @inlinable
    func openEffectSpecialized(_ id: JobID) -> R.Effect? { ledger.effects[id] }

    /// How many of an open job's mutations have arrived without a gap (applied, or buffered
    /// until their turn); `nil` when the job is not open.
    ///
    /// A runtime whose transport keeps each worker's messages in order uses it to tell a DONE
    /// that declares mutations which never arrived (a faulty worker) from one that is early.
    public func receivedEmits(of id: JobID) -> UInt32? { R._sequencerReceivedEmits(of: id, in: self) }

    /// ``receivedEmits(of:)``'s work, compiled for each reactor.
    @inlinable
    func receivedEmitsSpecialized(of id: JobID) -> UInt32? {
        guard let job = ledger.open[id] else { return nil }
        var count = job.nextEmit
        while ledger.isBuffered(job: id, emitIndex: count, progress: job) { count += 1 }
        return count
    }

    /// Whether any job of action `actionSeq` is still open.
    public func hasOpenJobs(actionSeq: UInt64) -> Bool { ledger.hasOpenJobs(actionSeq: actionSeq) }

    /// Open jobs whose worker has not reported an end yet, in job order: what must (still, or
    /// again) run somewhere.
    public var unreportedJobs: [Job<R.Effect>] {
        var unreported: [JobID] = []
        ledger.open.forEach { id, progress in if !progress.isReported { unreported.append(id) } }
        return unreported.sorted().compactMap { job($0) }
    }

    // MARK: Internals

    @usableFromInline
    func spent(_ id: JobID) throws(SequencerError) -> Progress<R.Mutation> {
        guard ledger.isSpent(id, lastActionSeq: actionSeq) else { throw .unknownJob(id) }
        return Progress(.duplicate)
    }

    /// Settles open job `id`, whose progress is `job`, if it is its turn.
    @inlinable
    mutating func settleIfReady(_ id: JobID, _ job: JobProgress) -> Progress<R.Mutation> {
        guard ledger.isReady(id, job) else { return Progress(.buffered) }
        var progress = Progress<R.Mutation>(.applied)
        settle(id, job, into: &progress)
        if progress.finished.isEmpty { progress.disposition = .buffered }
        return progress
    }

    /// Applies what a ready job can apply; ends it when it is complete, then gives the next job
    /// of its lane its turn, and so on down the lane. `known` is `first`'s progress as stored,
    /// when the caller has it (one lookup fewer).
    @inlinable
    mutating func settle(_ first: JobID, _ known: JobProgress? = nil, into progress: inout Progress<R.Mutation>) {
        defer { updateSubscriptions() }
        var next: JobID? = first
        var knownJob = known
        while let id = next, var job = knownJob ?? ledger.open[id] {
            next = nil
            knownJob = nil
            var drained = false
            while job.bufferedCount > 0, let mutation = ledger.takeBuffered(job: id, emitIndex: job.nextEmit) {
                job.bufferedCount -= 1
                progress.applied.append(reduce(mutation, actionSeq: id.actionSeq, origin: .async(job: id, emitIndex: job.nextEmit)))
                job.nextEmit += 1
                drained = true
            }
            if job.failed {
                if let failure = ledger.failures[id], let effect = ledger.effects[id] {
                    let mutations = reactor.failed(effect: effect, error: failure)
                    for index in 0 ..< mutations.count {
                        progress.applied.append(reduce(mutations[index], actionSeq: id.actionSeq, origin: .failure(job: id, index: UInt32(index))))
                    }
                }
            } else if job.declaredCount.map({ job.nextEmit < $0 }) ?? true {
                if drained { ledger.open[id] = job }
                return
            }
            progress.finished.append(id)
            next = ledger.close(id, completing: &progress.completedActions)
        }
    }

    @inlinable
    mutating func reduce(_ mutation: R.Mutation, actionSeq: UInt64, origin: MutationOrigin) -> AppliedMutation<R.Mutation> {
        reactor.reduce(state: &storedState, mutation: mutation)
        storedVersion += 1
        let applied = AppliedMutation(version: storedVersion, actionSeq: actionSeq, origin: origin, mutation: mutation)
        // A counted range: see `mutateTransformed`.
        for index in 0 ..< middlewares.count { middlewares[index].didApply(applied, state: storedState) }
        return applied
    }
}
