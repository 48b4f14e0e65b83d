/// What an async event did, for a runtime that is generic over the reactor and not specialised
/// for it: a ``Progress`` whose applied mutations went straight into the runtime's own array
/// (see ``Reactor/_sequencerApply(job:emitIndex:mutation:in:collecting:into:)``), so that the
/// runtime holds no value whose type depends on the reactor. Destroying a `Progress` there made
/// the Swift runtime look up its mutation array's type, twice per event.
public struct EventOutcome: Sendable, Equatable {
    /// What happened to the event itself.
    public var disposition: Disposition
    /// How many mutations it applied, by origin; when collected, they were appended in
    /// application order.
    public var applied: OriginCounts
    /// Jobs that ended (all their results applied), in the order they ended.
    public var finished: [JobID]
    /// Actions whose last open job ended, in the order they ended.
    public var completedActions: [UInt64]

    /// An outcome as given.
    @inlinable
    public init(disposition: Disposition, applied: OriginCounts, finished: [JobID], completedActions: [UInt64]) {
        self.disposition = disposition
        self.applied = applied
        self.finished = finished
        self.completedActions = completedActions
    }

    /// The outcome of `progress`; its mutations are appended to `collected` when `collecting`.
    @inlinable
    public init<Mutation>(_ progress: consuming Progress<Mutation>, collecting: Bool, into collected: inout [AppliedMutation<Mutation>]) {
        var counts = OriginCounts()
        for index in 0 ..< progress.applied.count { counts.count(progress.applied[index].origin) }
        if collecting { collected.append(contentsOf: progress.applied) }
        self.disposition = progress.disposition
        self.applied = counts
        self.finished = progress.finished
        self.completedActions = progress.completedActions
    }
}

/// Applied mutations counted by where they came from (see ``MutationOrigin``).
public struct OriginCounts: Sendable, Equatable {
    /// An action's own mutations.
    public var sync = 0
    /// Mutations emitted by jobs.
    public var async = 0
    /// Mutations of the reactor's failure hook.
    public var failure = 0
    /// Mutations of the reactor's cancel hook.
    public var cancelled = 0

    /// These counts (none, by default).
    @inlinable
    public init(sync: Int = 0, async: Int = 0, failure: Int = 0, cancelled: Int = 0) {
        self.sync = sync
        self.async = async
        self.failure = failure
        self.cancelled = cancelled
    }

    /// All of them.
    @inlinable
    public var total: Int { sync + async + failure + cancelled }

    /// Counts one mutation of `origin`.
    @inlinable
    public mutating func count(_ origin: MutationOrigin) {
        switch origin {
        case .sync: sync += 1
        case .async: async += 1
        case .failure: failure += 1
        case .cancelled: cancelled += 1
        }
    }
}
