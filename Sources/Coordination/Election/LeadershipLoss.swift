/// Why a leader stopped being one (handed to the term's `onLost`).
public struct LeadershipLoss: Sendable, Equatable, CustomStringConvertible {
    /// The causes.
    public enum Reason: Sendable, Equatable {
        /// etcd answered a keepalive with no TTL left: the lease expired or was revoked.
        case leaseExpired
        /// etcd refused a keepalive (the lease is unknown, or another error).
        case keepaliveRejected(String)
        /// No keepalive was confirmed for the TTL minus the safety margin (etcd unreachable, or
        /// this process too slow): past this point etcd may already have let another candidate in.
        case fenced(lastError: String?)
    }

    /// The epoch of the term that ended.
    public var epoch: Int64
    /// Why it ended.
    public var reason: Reason

    public init(epoch: Int64, reason: Reason) {
        self.epoch = epoch
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .leaseExpired:
            return "leadership of epoch \(epoch) lost: etcd reports its lease expired; stop acting as leader and campaign again"
        case .keepaliveRejected(let message):
            return "leadership of epoch \(epoch) lost: etcd refused the lease's keepalive (\(message)); stop acting as leader and campaign again"
        case .fenced(let lastError):
            let cause = lastError.map { " (last error: \($0))" } ?? ""
            return "leadership of epoch \(epoch) given up: no keepalive confirmed within the lease's TTL minus the safety margin\(cause); stop acting as leader, check etcd, and campaign again"
        }
    }
}
