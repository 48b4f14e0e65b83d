/// What accepting an action did, for a runtime that is generic over the reactor and not
/// specialised for it: an ``Acceptance`` without the values whose types depend on the reactor.
///
/// Its applied mutations went straight into the runtime's own array (see
/// ``Reactor/_sequencerAccept(_:in:collecting:into:keeping:)``). The whole ``Acceptance`` is
/// handed over only for an action that issued jobs, cancelled some or finished some; for a
/// plain one the runtime holds and destroys no value of a generic type: doing so made the
/// Swift runtime look up `Acceptance`'s type and destroy it through its value witness, every
/// action.
public struct AcceptanceSummary: Sendable, Equatable {
    /// The sequence number given to the action.
    public var actionSeq: UInt64
    /// The state version after the action.
    public var version: UInt64
    /// How many mutations accepting it applied (``Acceptance/applied``'s count).
    public var appliedCount: Int
    /// How many jobs it issued (``Acceptance/jobs``'s count).
    public var jobCount: Int
    /// Whether it cancelled no job and finished none: every mutation it applied is its own.
    public var isPlain: Bool
    /// Whether the whole ``Acceptance`` was handed over as well: the action issued jobs, or is
    /// not plain.
    public var keptAcceptance: Bool

    /// A summary as given.
    @inlinable
    public init(actionSeq: UInt64, version: UInt64, appliedCount: Int, jobCount: Int, isPlain: Bool, keptAcceptance: Bool) {
        self.actionSeq = actionSeq
        self.version = version
        self.appliedCount = appliedCount
        self.jobCount = jobCount
        self.isPlain = isPlain
        self.keptAcceptance = keptAcceptance
    }

    /// The summary of `acceptance`.
    @inlinable
    public init<Mutation, Effect>(_ acceptance: Acceptance<Mutation, Effect>) {
        actionSeq = acceptance.actionSeq
        version = acceptance.version
        appliedCount = acceptance.appliedCount
        jobCount = acceptance.jobCount
        isPlain = acceptance.cancelled.isEmpty && acceptance.finished.isEmpty
        keptAcceptance = jobCount != 0 || !isPlain || !acceptance.completedActions.isEmpty
    }
}
