/// The settings of one app's leader election.
public struct LeaderElectionConfiguration: Sendable, Equatable {
    /// The app whose authority is elected: the key is `/reactorbus/<app>/leader`.
    public var app: String
    /// The lease's TTL in seconds: how long etcd keeps a silent leader's key. A takeover after a
    /// crash takes about this long; etcd may raise it to its minimum (1.5 election timeouts).
    public var ttlSeconds: Int64
    /// How long before the lease could expire the leader gives up when no keepalive was
    /// confirmed; `nil` for a quarter of the TTL. With the renewal interval it must leave time
    /// to retry: interval + margin below the TTL.
    public var safetyMargin: Duration?
    /// How often the leader renews its lease; `nil` for half the TTL. A crashed leader's key
    /// lives until TTL after its last renewal, so renewing less often shortens the average
    /// takeover (half the TTL: TTL/2 to TTL after the crash, against 2/3 TTL to TTL when renewing
    /// every third), while the time between a renewal's due date and the fence is left for retries.
    public var renewalInterval: Duration?
    /// How often standbys read the key (``LeaderElection/observe(onChange:onError:)`` and a
    /// waiting ``LeaderElection/campaign(as:deadline:cancellation:onLost:)``).
    public var pollInterval: Duration

    public init(app: String, ttlSeconds: Int64 = 2, safetyMargin: Duration? = nil, renewalInterval: Duration? = nil,
                pollInterval: Duration = .milliseconds(150)) {
        self.app = app
        self.ttlSeconds = ttlSeconds
        self.safetyMargin = safetyMargin
        self.renewalInterval = renewalInterval
        self.pollInterval = pollInterval
    }

    /// The leader key.
    public var key: String { "/reactorbus/\(app)/leader" }

    /// The margin in force.
    public var effectiveSafetyMargin: Duration { safetyMargin ?? .seconds(ttlSeconds) / 4 }

    /// The renewal interval in force.
    public var effectiveRenewalInterval: Duration { renewalInterval ?? .seconds(ttlSeconds) / 2 }

    /// Throws when the settings cannot work.
    func validate() throws(CoordinationError) {
        guard !app.isEmpty, !app.contains("/") else {
            throw .invalidConfiguration("app name '\(app)' must be non-empty and contain no '/'")
        }
        guard ttlSeconds >= 1 else { throw .invalidConfiguration("lease TTL \(ttlSeconds) s: give 1 s or more") }
        let ttl = Duration.seconds(ttlSeconds)
        let margin = effectiveSafetyMargin
        let renewal = effectiveRenewalInterval
        guard margin > .zero, renewal > .zero, renewal + margin < ttl else {
            throw .invalidConfiguration(
                "safety margin \(margin) and renewal interval \(renewal) with a TTL of \(ttlSeconds) s: give both more than 0 and together less than the TTL")
        }
        guard pollInterval > .zero else { throw .invalidConfiguration("the poll interval must be positive") }
    }
}
