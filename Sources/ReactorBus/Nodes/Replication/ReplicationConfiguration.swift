/// An authority's part in replication: a primary that streams its journal to standbys, a
/// standby that follows a primary until promoted, or both (a standby that, once promoted, serves
/// its own standbys).
public struct ReplicationConfiguration: Sendable, Equatable {
    /// When an action's ack may leave a primary.
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        /// After the local journal commit only: a failover loses the records not yet streamed
        /// (`replication_lag_records`).
        case async
        /// After the local journal commit and at least one standby's: a failover loses no
        /// acknowledged action. Without a standby acks wait.
        case sync
    }

    /// Where standbys connect (ROUTER, bound); `nil` serves none.
    public var endpoint: String?
    /// When a primary's acks leave (default ``Mode/async``).
    public var mode: Mode = .async
    /// The primary's replication endpoint to follow; `nil` for a primary.
    public var standbyOf: String?
    /// The term stamped in the handshake (0 until elections set one).
    public var term: UInt64 = 0

    /// A primary serving standbys at `endpoint`, a standby of `standbyOf`, or both.
    public init(endpoint: String? = nil, mode: Mode = .async, standbyOf: String? = nil) {
        self.endpoint = endpoint
        self.mode = mode
        self.standbyOf = standbyOf
    }
}
