/// A lease etcd granted: keys attached to it vanish when it expires or is revoked.
public struct EtcdLease: Sendable, Equatable {
    /// The lease's id.
    public var id: Int64
    /// The TTL etcd granted, in seconds: at least the one asked for (etcd raises a TTL below its
    /// minimum, one and a half election timeouts).
    public var ttl: Int64
}
