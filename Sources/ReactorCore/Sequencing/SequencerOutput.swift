/// What `Sequencer.accept(_:)` did with an action.
public struct Acceptance<Mutation, Effect> {
    /// The sequence number given to the action (the first action gets 1).
    public var actionSeq: UInt64
    /// The state version after the action's sync mutations (and what its cancellations applied).
    public var version: UInt64
    /// Every mutation applied by accepting the action, in order: its sync mutations, then, for
    /// each job it cancelled, the reactor's `cancelled(effect:)` mutations (origin
    /// `.cancelled`) and the waiting results of lane jobs the cancellation let through.
    public var applied: [AppliedMutation<Mutation>] { didSet { appliedCount = applied.count } }
    /// One job per effect, to run elsewhere (without those of its effects that a later effect
    /// of the same action cancelled in flight).
    public var jobs: [Job<Effect>] { didSet { jobCount = jobs.count } }
    /// `applied.count` and `jobs.count` as plain integers: code that is generic over the reactor
    /// and not specialised for it (a runtime's engine) reads them without asking the Swift
    /// runtime for the arrays' element types, which it did on every action.
    @usableFromInline package internal(set) var appliedCount: Int
    @usableFromInline package internal(set) var jobCount: Int
    /// Jobs of earlier actions (or of this one) that the action cancelled, in the order they
    /// were cancelled: each has ended, and whatever it still emits is dropped. A runtime stops
    /// them.
    public var cancelled: [JobID] = []
    /// Other jobs that ended because a cancellation gave them their turn in a lane (all their
    /// results applied, in `applied`), in the order they ended.
    public var finished: [JobID] = []
    /// Actions whose last open job ended here (cancelled, or finished with its turn), in the
    /// order they ended: every mutation of theirs is applied. A runtime counts them as done
    /// without asking ``Sequencer/hasOpenJobs(actionSeq:)`` for each job.
    public var completedActions: [UInt64] = []

    @inlinable
    init(actionSeq: UInt64, version: UInt64, applied: [AppliedMutation<Mutation>], jobs: [Job<Effect>]) {
        self.actionSeq = actionSeq
        self.version = version
        self.applied = applied
        self.jobs = jobs
        self.appliedCount = applied.count
        self.jobCount = jobs.count
    }
}

extension Acceptance: Sendable where Mutation: Sendable, Effect: Sendable {}

/// What happened to one async event (an emitted mutation, a DONE or a FAILED).
public enum Disposition: Hashable, Sendable {
    /// It took effect now (and possibly released buffered results).
    case applied
    /// It is held until earlier emits arrive or an earlier job of its lane finishes.
    case buffered
    /// It was seen before and was dropped; nothing changed.
    case duplicate
}

/// The result of one async event: its disposition and everything it caused to be applied.
public struct Progress<Mutation> {
    /// What happened to the event itself.
    public var disposition: Disposition
    /// Every mutation applied as a consequence, in application order. May include results of
    /// other jobs that were waiting in the same lane.
    public var applied: [AppliedMutation<Mutation>]
    /// Jobs that ended during this call (all their results applied), in the order they ended.
    public var finished: [JobID]
    /// Actions whose last open job ended during this call, in the order they ended: every
    /// mutation of theirs is applied. A runtime counts them as done without asking
    /// ``Sequencer/hasOpenJobs(actionSeq:)`` for each finished job.
    public var completedActions: [UInt64] = []

    @inlinable
    init(_ disposition: Disposition, applied: [AppliedMutation<Mutation>] = [], finished: [JobID] = []) {
        self.disposition = disposition
        self.applied = applied
        self.finished = finished
    }
}

extension Progress: Sendable where Mutation: Sendable {}
