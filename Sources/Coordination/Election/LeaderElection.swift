import Foundation

/// Leader election for one app's authorities on etcd: at most one leader at a time, standbys
/// that take over when it resigns or goes silent, and an epoch that orders the terms.
///
/// A candidate campaigns with one transaction: if the key `/reactorbus/<app>/leader` does not
/// exist (`create_revision == 0`), put the candidate's ``LeaderInfo`` under it, attached to a
/// fresh lease of ``LeaderElectionConfiguration/ttlSeconds``; otherwise read it. Whoever creates
/// the key leads until its lease ends; the others poll the key and try again once it is gone.
///
/// ## Epochs
///
/// A term's epoch is the key's create revision. etcd's revision grows with every write to the
/// store and is never reused, and a new term needs a new create of the key, after the previous
/// one was deleted: so every term's epoch is larger than all earlier ones, with no clock
/// involved. Stamping the epoch on what a leader publishes (and refusing what carries a smaller
/// one) fences off a deposed leader that still runs.
///
/// ## Fencing
///
/// etcd deletes the key when the lease expires, at the earliest TTL seconds after it last
/// received a grant or keepalive, and only then can a standby create it. The leader renews every
/// half TTL (``LeaderElectionConfiguration/renewalInterval``) on its own thread: after a crash
/// its key lives on for TTL/2 to TTL. A renewal *sent* at `t` and confirmed proves that etcd
/// received it after `t`, so the lease lives at least until `t + TTL`. The leader keeps that bound and acts
/// only before `t + TTL - safetyMargin`: past it (etcd unreachable, or this process stalled), or as
/// soon as etcd answers that the lease is gone or refuses the keepalive, ``LeaderTerm/isLeader``
/// turns false and `onLost` is called once. So the old leader stops before etcd can let anyone
/// else in, by at least the margin (a quarter of the TTL unless set): the margin absorbs the
/// time `onLost` takes to stop the leader's work and any drift between the two clocks' rates. No
/// wall-clock agreement is needed: each side measures its own intervals. The renewal interval
/// and the margin together stay below the TTL, so a renewal is due before the fence and a leader
/// that reaches etcd retries a failed one until then (a quarter of the TTL by default): a
/// single late keepalive does not depose it.
///
/// A process paused longer than its fence (a stop signal, a long GC-like stall, a swapped-out
/// host) resumes past its deadline: its first check of ``LeaderTerm/isLeader`` is false and its
/// keeper reports the loss at once, while the epoch fences anything it had already sent.
///
/// Calls block the calling thread; the keepalive and observers run on threads of their own,
/// stopped and joined by ``LeaderTerm/resign(timeout:)`` and ``LeaderObserver/stop()``.
public final class LeaderElection: Sendable {
    /// The etcd client every call goes through.
    public let client: EtcdClient
    /// The election's settings.
    public let configuration: LeaderElectionConfiguration

    /// An election under `configuration`; throws when its settings cannot work.
    public init(client: EtcdClient, configuration: LeaderElectionConfiguration) throws(CoordinationError) {
        try configuration.validate()
        self.client = client
        self.configuration = configuration
    }

    /// The leader key.
    public var key: String { configuration.key }

    /// The current leader, or `nil` when the key is absent (no leader, or a takeover under way).
    public func currentLeader(timeout: Duration? = nil) throws(CoordinationError) -> Leader? {
        try client.get(key, timeout: timeout).map(leader(from:))
    }

    /// Campaigns as `candidate` until it wins, and returns the term; blocks meanwhile.
    ///
    /// While another candidate leads, polls the key every ``LeaderElectionConfiguration/pollInterval``
    /// and tries again once it is gone; while etcd cannot be reached, keeps trying. Throws
    /// ``CoordinationError/campaignTimedOut(key:leader:)`` at `deadline`,
    /// ``CoordinationError/cancelled`` once `cancellation` is raised, and etcd's refusals
    /// and bad responses as they come.
    /// - Parameter onLost: called once, on the keepalive thread, when the term is lost (not after
    ///   ``LeaderTerm/resign(timeout:)``): stop acting as the leader at once.
    public func campaign(as candidate: LeaderInfo, deadline: ContinuousClock.Instant, cancellation: CancellationFlag? = nil,
                         onLost: @escaping @Sendable (LeadershipLoss) -> Void) throws(CoordinationError) -> LeaderTerm {
        let value: Data
        do {
            value = try Self.encoder.encode(candidate)
        } catch {
            throw .invalidConfiguration("the candidate's description cannot be written as JSON: \(error)")
        }
        var lastSeen: Leader?
        var mustCheckFirst = false
        while true {
            if cancellation?.isCancelled == true { throw .cancelled }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw .campaignTimedOut(key: key, leader: lastSeen) }
            do {
                // While a leader holds the key, only read it (a grant and a revoke per poll would
                // be wasted writes); try to create it when it is gone.
                if mustCheckFirst, let current = try client.get(key, timeout: min(left, client.requestTimeout)) {
                    lastSeen = try? leader(from: current)
                    wait(until: deadline, cancellation: cancellation)
                    continue
                }
                mustCheckFirst = true
                if let term = try attempt(candidate, value: value, until: deadline, lastSeen: &lastSeen, onLost: onLost) {
                    return term
                }
            } catch .unreachable {
                // etcd may come back before the deadline (a restart, an election among its members).
            }
            wait(until: deadline, cancellation: cancellation)
        }
    }

    /// Reads the key every ``LeaderElectionConfiguration/pollInterval`` on a thread of its own
    /// and reports each change of leader (the first reading included) to `onChange`; a failed
    /// read goes to `onError`, once per run of failures.
    public func observe(onChange: @escaping @Sendable (Leader?) -> Void,
                        onError: @escaping @Sendable (CoordinationError) -> Void = { _ in }) -> LeaderObserver {
        LeaderObserver(election: self, onChange: onChange, onError: onError)
    }

    // MARK: Internals

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// One try: a lease, then the create-if-absent transaction. Returns the term when this
    /// candidate created the key; otherwise gives the lease back and returns `nil`.
    private func attempt(_ candidate: LeaderInfo, value: Data, until deadline: ContinuousClock.Instant, lastSeen: inout Leader?,
                         onLost: @escaping @Sendable (LeadershipLoss) -> Void) throws(CoordinationError) -> LeaderTerm? {
        let timeout = { min(max(deadline - ContinuousClock.now, .milliseconds(1)), self.client.requestTimeout) }
        let grantSent = ContinuousClock.now
        let lease = try client.grantLease(ttlSeconds: configuration.ttlSeconds, timeout: timeout())
        let outcome: EtcdCreateOutcome
        do {
            outcome = try client.createIfAbsent(key, value: value, lease: lease.id, timeout: timeout())
        } catch {
            _ = try? client.revokeLease(lease.id, timeout: timeout())
            throw error
        }
        switch outcome {
        case .created(let revision):
            let keeper = LeaseKeeper(client: client, epoch: revision, lease: lease, grantSent: grantSent,
                                     margin: configuration.effectiveSafetyMargin,
                                     interval: configuration.effectiveRenewalInterval, onLost: onLost)
            guard keeper.isValid else {
                // etcd took so long to answer that the term would start fenced: hand it back.
                _ = try? client.revokeLease(lease.id, timeout: timeout())
                return nil
            }
            return LeaderTerm(key: key, info: candidate, client: client, keeper: keeper)
        case .taken(let current):
            _ = try? client.revokeLease(lease.id, timeout: timeout())
            lastSeen = try? leader(from: current)
            return nil
        }
    }

    /// Sleeps one poll interval (less near the deadline), in short steps that notice a cancel.
    private func wait(until deadline: ContinuousClock.Instant, cancellation: CancellationFlag?) {
        let end = min(ContinuousClock.now + configuration.pollInterval, deadline)
        while ContinuousClock.now < end, cancellation?.isCancelled != true {
            let step = min(end - ContinuousClock.now, .milliseconds(20))
            if step > .zero { Thread.sleep(forTimeInterval: Double(step.components.seconds) + Double(step.components.attoseconds) / 1e18) }
        }
    }

    /// The leader an entry of the key describes.
    func leader(from entry: EtcdKeyValue) throws(CoordinationError) -> Leader {
        do {
            let info = try JSONDecoder().decode(LeaderInfo.self, from: entry.value)
            return Leader(info: info, epoch: entry.createRevision, lease: entry.lease)
        } catch {
            throw .malformedLeaderValue(key: key, detail: "\(entry.value.count) bytes: \(EtcdJSON.excerpt(Array(entry.value)))")
        }
    }
}
