/// Everything a ``Sequencer`` knows, as a value that can be written to disk and restored.
///
/// Besides state, version and `actionSeq`, a checkpoint keeps the bookkeeping of open jobs
/// (which emits were applied, which wait in buffers or lanes), so that after a restart a worker's
/// late duplicate is still recognised and dropped.
public struct SequencerCheckpoint<R: Reactor>: Codable, Sendable {
    /// The state at `version`.
    public var state: R.State
    /// The number of mutations applied.
    public var version: UInt64
    /// The last accepted action's sequence number.
    public var actionSeq: UInt64
    var ledger: JobLedger<R.Effect, R.Mutation>
    /// Running subscriptions; absent in checkpoints written before subscriptions existed.
    var subscriptions: SubscriptionLedger<R.Subscription, R.Action>?
}


extension Sequencer {
    /// The sequencer's complete state, for a durable snapshot.
    public func checkpoint() -> SequencerCheckpoint<R> {
        SequencerCheckpoint(state: state, version: version, actionSeq: actionSeq, ledger: ledger, subscriptions: subscriptionLedger)
    }

    /// Restores a sequencer exactly as it was when `checkpoint` was taken.
    public init(reactor: R, restoring checkpoint: SequencerCheckpoint<R>, middlewares: [any Middleware<R>] = [], emitWindow: UInt32 = 65_536) {
        self.init(reactor: reactor, middlewares: middlewares, emitWindow: emitWindow)
        self.storedState = checkpoint.state
        self.storedVersion = checkpoint.version
        self.storedActionSeq = checkpoint.actionSeq
        self.ledger = checkpoint.ledger
        restoreSubscriptions(checkpoint.subscriptions)
    }
}

extension SequencerCheckpoint {
    /// The same checkpoint for another reactor whose values have another shape: every app value
    /// in it (the state, each open job's effect, each buffered mutation) converted, everything
    /// else (versions, the job ledger's bookkeeping) kept exactly. Running subscriptions keep
    /// their run numbers and applied events by id: the restored sequencer works out the new
    /// state's subscriptions, and one whose id ran before continues that run. Used to migrate a checkpoint
    /// written by an older release of an app to the current one's types.
    public func converted<Other: Reactor>(
        to other: Other.Type,
        state convertState: (R.State) throws -> Other.State,
        effect convertEffect: (R.Effect) throws -> Other.Effect,
        mutation convertMutation: (R.Mutation) throws -> Other.Mutation
    ) rethrows -> SequencerCheckpoint<Other> {
        SequencerCheckpoint<Other>(
            state: try convertState(state), version: version, actionSeq: actionSeq,
            ledger: try ledger.converted(effect: convertEffect, mutation: convertMutation),
            subscriptions: subscriptions.map { SubscriptionLedger(lastRun: $0.lastRun, carried: $0.carriedRuns) })
    }
}
