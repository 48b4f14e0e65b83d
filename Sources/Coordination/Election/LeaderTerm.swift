/// One term of leadership won by ``LeaderElection/campaign(as:deadline:cancellation:onLost:)``:
/// its epoch, and the lease kept alive on a thread of its own until the term ends.
///
/// The term ends when ``resign()`` is called, when the value is dropped (the lease is then left
/// to expire), or when the lease is lost — then `onLost` is called once, on the keeper thread.
/// A leader checks ``isLeader`` before any act that must not happen twice, and stamps its epoch
/// on what it publishes so that a stale leader's messages can be told apart.
public final class LeaderTerm: Sendable {
    /// The term's epoch: the leader key's create revision; every later term's is larger.
    public var epoch: Int64 { keeper.epoch }
    /// The lease holding the leader key (etcd's TTL may exceed the one asked for).
    public var lease: EtcdLease { keeper.lease }
    /// What this leader published.
    public let info: LeaderInfo
    /// The leader key.
    public let key: String

    private let client: EtcdClient
    private let keeper: LeaseKeeper
    private let thread: LoopThread

    init(key: String, info: LeaderInfo, client: EtcdClient, keeper: LeaseKeeper) {
        self.key = key
        self.info = info
        self.client = client
        self.keeper = keeper
        thread = LoopThread.start(name: "lease-keeper") { keeper.run($0) }
    }

    deinit {
        _ = keeper.end(.abandoned)
        thread.stop()
    }

    /// Whether this process may still act as the leader: the term has not ended and the lease is
    /// known to outlive the safety margin.
    public var isLeader: Bool { keeper.isValid }

    /// The instant this leader must stop acting unless a keepalive is confirmed before it.
    public var fenceDeadline: ContinuousClock.Instant { keeper.fenceDeadline }

    /// Why the term ended, when it was lost (`nil` while it lasts, or after ``resign()``).
    public var loss: LeadershipLoss? {
        if case .lost(let loss) = keeper.ending { return loss }
        return nil
    }

    /// Ends the term: stops the keepalive (joined) and revokes the lease, which deletes the
    /// leader key so that a standby wins at once. `onLost` is not called. When etcd cannot be
    /// reached the error is thrown and the key stays until the lease expires (one TTL).
    public func resign(timeout: Duration? = nil) throws(CoordinationError) {
        _ = keeper.end(.resigned)
        thread.stop()
        try client.revokeLease(lease.id, timeout: timeout)
    }

    /// Stops the keepalives without ending the term or revoking the lease — what a paused or
    /// stalled process looks like to etcd. For tests of the fence.
    package func stallKeepalivesForTesting() { keeper.stallRenewals() }
}
