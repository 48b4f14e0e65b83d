/// Where an applied mutation came from.
public enum MutationOrigin: Hashable, Codable, Sendable {
    /// The `index`-th sync mutation of an action.
    case sync(index: UInt32)
    /// The `emitIndex`-th mutation emitted by a job.
    case async(job: JobID, emitIndex: UInt32)
    /// The `index`-th mutation of the reactor's failure hook for a job that failed for good.
    case failure(job: JobID, index: UInt32)
    /// The `index`-th mutation of the reactor's cancel hook (`cancelled(effect:)`) for a job
    /// that was cancelled.
    case cancelled(job: JobID, index: UInt32)

    /// The job, for async, failure and cancelled origins.
    public var job: JobID? {
        switch self {
        case .sync: nil
        case .async(let job, _), .failure(let job, _), .cancelled(let job, _): job
        }
    }
}

/// A mutation that has been reduced into the state, with its place in history.
public struct AppliedMutation<Mutation> {
    /// The state version right after this mutation (the first applied mutation gives 1).
    public var version: UInt64
    /// The action this mutation belongs to.
    public var actionSeq: UInt64
    /// Sync, async (with job and emit index) or failure.
    public var origin: MutationOrigin
    /// The mutation itself.
    public var mutation: Mutation

    /// Creates a record of an applied mutation.
    @inlinable
    public init(version: UInt64, actionSeq: UInt64, origin: MutationOrigin, mutation: Mutation) {
        self.version = version
        self.actionSeq = actionSeq
        self.origin = origin
        self.mutation = mutation
    }
}

extension AppliedMutation: Sendable where Mutation: Sendable {}
extension AppliedMutation: Equatable where Mutation: Equatable {}
extension AppliedMutation: Codable where Mutation: Codable {}
