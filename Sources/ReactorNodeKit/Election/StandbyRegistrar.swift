import Coordination
import Foundation
import ReactorLog

/// Keeps a standby's ``StandbyRegistration`` in etcd: the key on a lease of its own, rewritten
/// when the standby's progress moves, the lease renewed every third of its TTL (by default), and granted again
/// when it ended (etcd unreachable at the start, or the process paused past it), since others
/// decide who takes over from what the key says.
///
/// Used by one task (the standby's loop in ``ElectedAuthority``); the etcd calls run on threads
/// of their own.
final class StandbyRegistrar {
    private let client: EtcdClient
    private let key: String
    private let ttl: Duration
    private let renewEvery: Duration
    private let logger: Logger
    private var lease: EtcdLease?
    private var lastKeepAlive = ContinuousClock.now
    /// What the key holds now, as far as this registrar knows.
    private(set) var published: StandbyRegistration?

    /// - Parameter renewEvery: how long after a renewal the next is due; a third of `ttl` if
    ///   `nil`.
    init(client: EtcdClient, key: String, ttl: Duration, renewEvery: Duration? = nil, logger: Logger) {
        self.client = client
        self.key = key
        self.ttl = ttl
        self.renewEvery = renewEvery ?? ttl / 3
        self.logger = logger
    }

    /// Writes `progress` if the key does not hold it, and renews the lease when due. Failures
    /// are retried at the next call.
    func update(_ progress: StandbyRegistration) async {
        let client = self.client
        if lease == nil {
            lease = try? await blocking { [ttl] in try client.grantLease(ttlSeconds: Int64(max(1, ttl / .seconds(1))), timeout: .milliseconds(500)) }
            lastKeepAlive = .now
            published = nil
        }
        guard let lease else { return }
        if progress != published, let value = try? JSONEncoder().encode(progress) {
            if (try? await blocking({ [key] in try client.put(key, value: value, lease: lease.id, timeout: .milliseconds(500)) })) != nil {
                published = progress
            }
        }
        guard ContinuousClock.now - lastKeepAlive >= renewEvery else { return }
        lastKeepAlive = .now
        if let left = try? await blocking({ try client.keepAlive(lease: lease.id, timeout: .milliseconds(500)) }), left <= 0 {
            logger.warning("the lease of this standby's registration ended; registering again")
            self.lease = nil
            published = nil
        }
    }

    /// Deletes the key (revokes its lease), so that no one waits for this standby.
    func withdraw() {
        guard let lease else { return }
        _ = try? client.revokeLease(lease.id, timeout: .seconds(1))
        self.lease = nil
        published = nil
    }
}
