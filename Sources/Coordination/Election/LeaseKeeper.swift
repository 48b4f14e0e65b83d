import Synchronization

/// A leader's lease, kept alive on a thread of its own, and the fence that ends the term when it
/// cannot be: the state behind a ``LeaderTerm``.
///
/// It renews every ``LeaderElectionConfiguration/effectiveRenewalInterval`` (half the TTL unless
/// set). A confirmed renewal sent at `t` proves the lease lives until
/// at least `t + TTL` (etcd renews when it receives, after `t`), so the term is valid until that
/// instant minus the safety margin; past it, or as soon as etcd says the lease is gone, the
/// keeper ends the term and calls `onLost` once.
final class LeaseKeeper: Sendable {
    /// How a term ended.
    enum Ending: Sendable, Equatable {
        case lost(LeadershipLoss)
        case resigned
        case abandoned
    }

    private struct State {
        /// When the lease is known to live until (the last confirmed renewal's send time + TTL).
        var validUntil: ContinuousClock.Instant
        var ending: Ending?
        var lastError: String?
    }

    let epoch: Int64
    let lease: EtcdLease
    let margin: Duration
    /// How often the lease is renewed.
    let interval: Duration
    private let grantSent: ContinuousClock.Instant
    private let client: EtcdClient
    private let onLost: @Sendable (LeadershipLoss) -> Void
    private let state: Mutex<State>
    /// Set by a test to stop renewing, as a paused process would.
    private let renewalsStalled = Atomic<Bool>(false)

    init(client: EtcdClient, epoch: Int64, lease: EtcdLease, grantSent: ContinuousClock.Instant, margin: Duration, interval: Duration,
         onLost: @escaping @Sendable (LeadershipLoss) -> Void) {
        self.client = client
        self.interval = interval
        self.epoch = epoch
        self.lease = lease
        self.margin = margin
        self.onLost = onLost
        self.grantSent = grantSent
        state = Mutex(State(validUntil: grantSent + .seconds(lease.ttl)))
    }

    /// The instant the term ends unless a renewal is confirmed before it.
    var fenceDeadline: ContinuousClock.Instant { state.withLock { $0.validUntil } - margin }

    /// How the term ended, or `nil` while it lasts (see ``isValid``, which also checks the time).
    var ending: Ending? { state.withLock { $0.ending } }

    /// Whether the term still holds: not ended, and before the fence deadline.
    var isValid: Bool {
        state.withLock { $0.ending == nil && ContinuousClock.now < $0.validUntil - margin }
    }

    /// Ends the term for `ending` unless it has ended already; true when this call ended it.
    func end(_ ending: Ending) -> Bool {
        state.withLock { state in
            guard state.ending == nil else { return false }
            state.ending = ending
            return true
        }
    }

    /// Stops renewing without ending the term (a test's stand-in for a paused process).
    func stallRenewals() { renewalsStalled.store(true, ordering: .releasing) }

    /// The keeper thread's loop.
    func run(_ thread: LoopThread) {
        let retryDelay = min(interval, .milliseconds(100))
        var nextRenewal = grantSent + interval
        while true {
            let (fence, ended, lastError) = state.withLock { ($0.validUntil - margin, $0.ending != nil, $0.lastError) }
            if ended { return }
            let now = ContinuousClock.now
            if now >= fence {
                lose(.fenced(lastError: lastError))
                return
            }
            let stalled = renewalsStalled.load(ordering: .acquiring)
            if stalled || now < nextRenewal {
                guard thread.pause((stalled ? fence : min(nextRenewal, fence)) - now) else { return }
                continue
            }
            do {
                let left = try client.keepAlive(lease: lease.id, timeout: min(interval, fence - now))
                guard left > 0 else {
                    lose(.leaseExpired)
                    return
                }
                state.withLock { state in
                    state.validUntil = max(state.validUntil, now + .seconds(left))
                    state.lastError = nil
                }
                nextRenewal = now + interval
            } catch .rejected(_, _, _, let message) {
                lose(.keepaliveRejected(message))
                return
            } catch {
                // No answer (or a garbled one) proves nothing either way: retry until the fence.
                state.withLock { $0.lastError = error.description }
                nextRenewal = ContinuousClock.now + retryDelay
            }
        }
    }

    private func lose(_ reason: LeadershipLoss.Reason) {
        let loss = LeadershipLoss(epoch: epoch, reason: reason)
        if end(.lost(loss)) { onLost(loss) }
    }
}
