import ZeroMQ

/// When the authority's feed publishes a full snapshot.
///
/// The feed's primary channel is incremental: every applied mutation, in order. Snapshots are
/// for observers that do not apply mutations themselves, and cost time to encode in proportion
/// to the state, so they go out on a schedule: when the version has moved by ``everyVersions``
/// since the last one, or when ``interval`` allows, whichever comes first (and only when the
/// version moved, and someone subscribed to `snapshot`). A snapshot is also always available on
/// request on the actions socket (`snapshot`, `snapshot_chunk`).
public struct FeedSnapshotPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The time side of the schedule.
    public enum Interval: Sendable, Hashable {
        /// As often as keeps encoding snapshots to at most this share (0 < share < 1) of the
        /// loop's time: after a snapshot that took `t` to encode the next waits `t × (1 − share) / share`,
        /// counted on the loop's millisecond clock. A small state goes out in the first batch
        /// of each millisecond (at most about a thousand a second), a 64 MiB one every few
        /// seconds.
        ///
        /// Why milliseconds: counted in nanoseconds, a small state went out after nearly every
        /// batch. With one action in flight and an observer following (2 cores), the observer
        /// then saw each version after 180-210 µs instead of 610-670 µs (p50), but the acks
        /// took 28-64 µs longer than without the observer, where they had taken about as long:
        /// the observer and the feed took the cores the acks needed.
        case adaptive(share: Double)
        /// At most once per this duration.
        case every(Duration)
        /// Never by time (only by ``FeedSnapshotPolicy/everyVersions``, if set).
        case off
    }

    /// A snapshot once the version has moved by this many since the last one; `nil`: not by count.
    public var everyVersions: UInt64?
    /// The time side of the schedule.
    public var interval: Interval

    /// Creates a policy.
    public init(everyVersions: UInt64? = nil, interval: Interval = .adaptive(share: 0.05)) {
        self.everyVersions = everyVersions.flatMap { $0 == 0 ? nil : $0 }
        self.interval = interval
    }

    /// The default: adaptive, snapshot encoding at most 5% of the loop's time.
    public static let adaptive = FeedSnapshotPolicy()
    /// No snapshots on the feed: observers apply mutations, or fetch a snapshot on request.
    public static let off = FeedSnapshotPolicy(interval: .off)

    public var description: String {
        let time: String = switch interval {
        case .adaptive(let share): "adaptive (\(Int((share * 100).rounded()))% of the loop's time)"
        case .every(let duration): "every \(duration)"
        case .off: "never by time"
        }
        return everyVersions.map { "every \($0) versions, or \(time)" } ?? time
    }
}

/// The authority loop's side of a ``FeedSnapshotPolicy``: when the last snapshot was taken, at
/// which version, and what it cost, so that it can tell the engine what is due.
struct FeedSnapshotSchedule {
    let policy: FeedSnapshotPolicy
    /// The version of the last snapshot taken for the feed; `nil` before the first.
    private(set) var lastVersion: UInt64?
    private var lastTaken: UInt64?
    private var lastCostNanoseconds: UInt64 = 0

    init(policy: FeedSnapshotPolicy) {
        self.policy = policy
    }

    /// Whether time allows a snapshot `now` (monotonic milliseconds), if the version moved.
    func timeAllows(now: UInt64) -> Bool {
        guard let lastTaken else {
            // The first one goes out at once, unless the policy publishes none by time.
            if case .off = policy.interval { return false }
            return true
        }
        switch policy.interval {
        case .off:
            return false
        case .every(let duration):
            // Saturating: an interval given through the API may be longer than the clock can count.
            return now >= lastTaken.saturatingAdd(duration.wholeMilliseconds)
        case .adaptive(let share):
            let bounded = min(max(share, 0.001), 0.999)
            let waitMilliseconds = Double(lastCostNanoseconds) * (1 - bounded) / bounded / 1_000_000
            return Double(now) >= Double(lastTaken) + waitMilliseconds
        }
    }

    /// The version at which a snapshot is due by count, if the policy counts versions.
    var dueAtVersion: UInt64? {
        policy.everyVersions.map { (lastVersion ?? 0) + $0 }
    }

    /// Notes a snapshot taken for the feed; `cost` is its encoding time (`nil`: it was encoded
    /// already, for a request, and the last cost stands).
    mutating func took(version: UInt64, costNanoseconds cost: UInt64?, now: UInt64) {
        lastVersion = version
        lastTaken = now
        if let cost { lastCostNanoseconds = cost }
    }
}
