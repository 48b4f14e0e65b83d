import MessagePack

/// Every figure a bench run measured, phase by phase; a phase that did not run is `nil`.
///
/// Correctness checks (the observer's final count equals the actions sent, and so on) are kept
/// as named booleans: any false one makes the run exit 1. Missed performance targets never do.
struct BenchResults: Sendable {
    /// The raw libzmq figures.
    struct Baseline: Sendable {
        var pubsubPerSecond: Double
        var pubsubMessages: Int
        var rtt: LatencyRecorder.Summary
        var echoPerSecond: Double
        var echoWindow: Int
    }

    /// A client pipelining actions to an authority while an observer follows the feed.
    struct Pipeline: Sendable {
        var actions: Int
        var acked: Int
        var errors: Int
        /// Acks per second as the client saw them (first send to last ack).
        var ackedPerSecond: Double
        /// Actions per second until the observer held the final state (first send to that snapshot).
        var appliedPerSecond: Double
        var observerField: Int64?
        var snapshotsPublished: Int
        var measuredActionBytes: Double
        var measuredAckBytes: Double
        var stats: MessagePackValue?
        /// CPU (user + system) the authority spent per action, in µs, from the first send until
        /// the observer held the final state.
        var authorityCPUMicroseconds: Double? = nil
        /// The same for the workers together (phases with workers).
        var workersCPUMicroseconds: Double? = nil
    }

    /// One action in flight at a time.
    struct Latency: Sendable {
        /// Action -> ack, the client and the authority alone.
        var ack: LatencyRecorder.Summary
        /// Action -> ack while an observer follows the feed.
        var ackObserved: LatencyRecorder.Summary
        /// Action -> the observer holds a state at or past its version.
        var observed: LatencyRecorder.Summary
        /// Raw round trips interleaved with the actions of the run without an observer.
        var rawPaired: LatencyRecorder.Summary
        /// Raw round trips interleaved with the actions of the run with the observer.
        var rawPairedObserved: LatencyRecorder.Summary
    }

    /// The inventory app: a large state published as whole snapshots.
    struct SnapshotCost: Sendable {
        var items: Int
        var actions: Int
        var ackedPerSecond: Double
        var stateBytes: Int
        var snapshotsPublished: Int
        var feedBytesPerSecond: Double
        var observerBytes: Int
        var seconds: Double

        var snapshotsPerThousandActions: Double { Double(snapshotsPublished) * 1_000 / Double(max(actions, 1)) }
        var actionsPerSnapshot: Double { Double(actions) / Double(max(snapshotsPublished, 1)) }
    }

    /// The `catalog` app grown to one size, then taking the state phase's action mix.
    struct StateRun: Sendable {
        /// The size asked for, and the state's MessagePack size once grown.
        var targetBytes: Int
        var stateBytes: Int
        var entries: Int
        var actions: Int
        var acked: Int
        var ackedPerSecond: Double
        var snapshotsWritten: Int
        /// A late-joining observer's seconds from `start()` to its first state (largest size only).
        var lateJoinSeconds: Double?
    }

    /// The authority's memory while it takes many actions.
    struct Memory: Sendable {
        struct Sample: Sendable {
            var acked: Int
            var rssKiB: Int
        }

        var actions: Int
        var samples: [Sample]
        var startRSSKiB: Int
        var endRSSKiB: Int
        var peakKiB: Int
        var ackedPerSecond: Double

        /// The sample after the first tenth of the actions: the reference once warm.
        var warmRSSKiB: Int { samples.first(where: { $0.acked > 0 })?.rssKiB ?? startRSSKiB }
        var growthKiB: Int { endRSSKiB - warmRSSKiB }
        /// Flat: after warm-up it grew by at most 10% or 8 MiB, whichever is larger.
        var isFlat: Bool { growthKiB <= max(8 * 1_024, warmRSSKiB / 10) }
    }

    /// Effects that wait 10 ms, through `workers` workers of `concurrency` each.
    struct EffectsRun: Sendable {
        var workers: Int
        var concurrency: Int
        var pipeline: Pipeline
        /// Effects per second if every one took exactly its wait: `workers × concurrency / 10 ms`.
        var ideal: Double

        /// Applied/s against the ideal.
        var ratio: Double { ideal > 0 ? pipeline.appliedPerSecond / ideal : 0 }
        /// Effects in flight in all.
        var inFlight: Int { workers * concurrency }
    }

    /// Many clients at once, a connection each, 1,000 actions unacked in all.
    struct ClientsRun: Sendable {
        var clients: Int
        /// Unacked actions per client.
        var window: Int
        var acked: Int
        var ackedPerSecond: Double
        /// Action -> ack over every action.
        var latency: LatencyRecorder.Summary
        /// CPU (user + sys) per action of the authority, and of the one process that runs every
        /// client: where the time goes as connections grow.
        var authorityCPUMicroseconds: Double?
        var clientsCPUMicroseconds: Double?
    }

    /// Acked actions per second under one fsync policy.
    struct Durability: Sendable {
        var policy: String
        var actions: Int
        var acked: Int
        var ackedPerSecond: Double
        var journalCommits: Int
        var finalCount: Int64?
    }

    /// One run of the pause phase: a ping probe's round trips while clients load a journaling
    /// authority, with snapshots written during the load or not.
    struct Pause: Sendable {
        var snapshotEvery: Int?
        var actions: Int
        var acked: Int
        var ackedPerSecond: Double
        /// Ping round trips; `max` is the loop's longest pause the probe saw.
        var rtt: LatencyRecorder.Summary
        var over100ms: Int
        /// Pings slower than 50 ms (the probe lists them).
        var over50ms = 0
        var snapshotsWritten: Int
        var workersLost: Int
    }

    /// One run of the state phase's pauses: the ping probe while snapshots of the largest state
    /// are written, from the loop's checkpoints or from a snapshot replica, or while it is
    /// published on the feed or fetched.
    struct StatePause: Sendable {
        var replica: Bool
        /// What made the authority encode its state during the load.
        var load: StatePausePhase.Load
        /// Feed snapshots instead of disk snapshots: a subscriber made the authority publish them.
        var feed: Bool { load == .feed }
        /// The feed snapshots the subscriber received.
        var feedSnapshots = 0
        /// Fetches instead of disk snapshots: how many a client made during the load, and the
        /// longest one's milliseconds (`nil`: no fetcher ran).
        var fetches: (count: Int, longestMilliseconds: Double)?
        var run: Pause

        /// Where the encodings came from: `replica` (a snapshot replica's state), `checkpoints`
        /// (the loop's checkpoints, for disk snapshots) or `loop_copies` (a copy of the loop's
        /// state for each feed snapshot or fetch, encoded off the loop).
        var encodedFrom: String {
            if replica { return "replica" }
            return load == .disk ? "checkpoints" : "loop_copies"
        }
    }

    /// Failovers of elected authorities, and acked/s with and without replication.
    struct Failover: Sendable {
        /// The leader lease, in seconds.
        var lease: Int
        /// Each round's time from the primary's SIGKILL to the first ack from the next one.
        var seconds: [Double]
        /// The same with a 1 s lease.
        var shortLeaseSeconds: [Double] = []
        var unreplicatedPerSecond: Double = 0
        var asyncPerSecond: Double = 0
        var syncPerSecond: Double = 0
        /// CPU (user + system) per action in µs of each role, by replication mode (`none`,
        /// `async`, `sync`): where the cores went while the roles shared them.
        var cpu: [String: ReplicationCPU] = [:]

        var p50: Double? { Self.median(seconds) }
        var max: Double? { seconds.max() }
        var shortLeaseP50: Double? { Self.median(shortLeaseSeconds) }

        private static func median(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.sorted()[(values.count - 1) / 2] }
    }

    /// CPU per action of the roles of one replication run, in µs (`nil`: not measured).
    struct ReplicationCPU: Sendable {
        var primary: Double?
        var standby: Double?
        var client: Double?

        /// Every role's together.
        var total: Double? {
            guard let primary, let client else { return nil }
            return primary + client + (standby ?? 0)
        }
    }

    /// The high-availability phase, or why it was skipped.
    enum FailoverOutcome: Sendable {
        case skipped(String)
        case measured(Failover)
    }

    /// The Python baseline authority, or why it was skipped.
    enum Python: Sendable {
        case skipped(String)
        case measured(Pipeline)
    }

    var plan: BenchPlan
    var sizes: WireSizes
    var baseline: Baseline?
    /// The sync pipeline against the authority on libzmq and msgpack-c calls alone.
    var pipelineBaseline: Pipeline?
    /// The async pipeline against the same authority and its workers on those calls alone.
    var pipelineAsyncBaseline: Pipeline?
    var sync: Pipeline?
    var async: Pipeline?
    var latency: Latency?
    var snapshot: SnapshotCost?
    /// The state phase, smallest size first.
    var state: [StateRun] = []
    /// Seconds to copy the largest state's bytes through a raw socket pair in chunks.
    var stateRawCopySeconds: Double?
    /// Seconds to build the largest state from its bytes with msgpack-c and no Codable (``StateFloor``).
    var stateFloorBuildSeconds: Double?
    /// Seconds to decode the largest state's bytes through the Codable coders and to encode the
    /// decoded state again, in a fresh process: the codec's share of a late joiner's wait.
    var stateCodableEncodeSeconds: Double?
    var stateCodableDecodeSeconds: Double?
    /// The largest state restarted and snapshotted, from checkpoints, then from a replica.
    var statePauses: [StatePause] = []
    /// A late joiner's floor: the raw copy of the bytes, then the build without Codable.
    var stateFloorSeconds: Double? {
        guard let copy = stateRawCopySeconds, let build = stateFloorBuildSeconds else { return nil }
        return copy + build
    }
    var memory: Memory?
    /// The effects phase, in the order run.
    var effects: [EffectsRun] = []
    /// The clients phase, fewest clients first.
    var clients: [ClientsRun] = []
    /// The clients phase's fewest and most clients against the libzmq + msgpack-c authority.
    var clientsPipeline: [ClientsRun] = []
    var durability: [Durability] = []
    /// The pause phase: without snapshots, then with.
    var pause: [Pause] = []
    var python: Python?
    /// The high-availability phase, or why it was skipped.
    var failover: FailoverOutcome?
    /// What the machine did during each phase that ran, in order (none where `/proc` cannot say).
    var host: [HostActivity] = []
    /// Correctness checks in the order they were made: a JSON key, what was checked, the outcome.
    var checks: [(key: String, name: String, passed: Bool)] = []
    /// Phases that could not finish, with why.
    var failures: [(phase: String, message: String)] = []

    var passed: Bool { checks.allSatisfy(\.passed) && failures.isEmpty }

    mutating func check(_ key: String, _ name: String, _ passed: Bool) {
        checks.append((key, name, passed))
    }
}
