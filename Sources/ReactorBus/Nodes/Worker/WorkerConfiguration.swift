import Glibc
import ReactorCore
import SystemCalls

/// What a ``WorkerNode`` connects to, what it announces and how patient it is.
public struct WorkerConfiguration: Sendable, Hashable {
    /// The authority's workers endpoint, e.g. `tcp://127.0.0.1:7002`; or several, separated by
    /// commas, when standby authorities can take over: the worker registers with the first, and
    /// when that one is lost (``missedHeartbeats`` intervals without a word) it moves to the next,
    /// round robin, and sends `ready` there. Its running jobs are cancelled on the move: the
    /// authority that serves now re-dispatches whatever is unfinished.
    public var authorityEndpoint: String
    /// The app the worker serves; the authority refuses a worker of another app (`wrong_app`).
    public var appName: String
    /// The app's schema version this worker's effects speak, sent in `ready`; an authority of
    /// another version refuses it (`wrong_app`) unless its ``AppSchema/compatibleVersions`` list this one.
    public var schemaVersion: UInt32 = 1
    /// The name announced in `ready`, for the authority's logs.
    public var name: String
    /// How many jobs run at once (at least 1).
    public var concurrency: Int
    /// Where the effects' code runs: on the worker's loop thread (the default) or on the
    /// shared pool (see ``EffectThreads``).
    public var effectThreads: EffectThreads
    /// How many jobs the worker holds beyond those it runs, waiting in its own queue, so that a
    /// slot that frees starts the next job at once instead of after a round trip to the
    /// authority (for effects that wait on the network, that round trip is idle time in every
    /// slot). `nil`, the default: half of ``concurrency``, rounded up; 0: a job is taken only
    /// when a slot is free. The authority's job timeout counts from dispatch, so it includes
    /// the time a job waits here.
    public var prefetch: Int?
    /// The jobs the worker holds before it runs them: ``prefetch``, or its default.
    public var prefetchedJobs: Int { prefetch.map { max(0, $0) } ?? (concurrency + 1) / 2 }
    /// The jobs the worker holds at once, running and waiting: announced to the authority as
    /// its capacity.
    public var capacity: Int { concurrency + prefetchedJobs }
    /// The most finished jobs' tasks kept waiting for the next jobs (see `reusableTasks` in
    /// ``EffectRunner``): one per running job, up to 1,024. A parked task keeps its memory (a
    /// few kilobytes), so a worker that once ran 10,000 effects at once does not keep 10,000
    /// of them; beyond the bound a finished task ends, and a job that finds none parked or
    /// running gets a new one.
    public var reusableTasks: Int { min(concurrency, 1_024) }
    /// The effect kinds this worker runs; empty means every kind.
    public var kinds: [String]
    /// How often to send a heartbeat when nothing else was sent. The authority's `welcome`
    /// replaces it with the authority's own interval.
    public var heartbeatInterval: Duration
    /// After this many intervals without a word from the authority, it counts as lost and the
    /// worker reconnects (at least 1).
    public var missedHeartbeats: Int
    /// Attempts, backoff and per-attempt timeout for every effect.
    public var retry: RetryPolicy
    /// The largest message the worker accepts or sends, in bytes (the authority's
    /// `--max-message-bytes`).
    public var maxMessageBytes: Int
    /// CURVE keys for talking to an authority that has CURVE on; `nil` for plain text.
    public var security: ClientSecurity? = nil
    /// How long a graceful stop waits for running effects before it cancels them.
    public var stopGracePeriod: Duration

    /// Creates a configuration; out-of-range numbers are raised to their minimum.
    public init(
        authorityEndpoint: String,
        appName: String,
        name: String = WorkerConfiguration.defaultName(),
        concurrency: Int = 4,
        effectThreads: EffectThreads = .loop,
        prefetch: Int? = nil,
        kinds: [String] = [],
        heartbeatInterval: Duration = .seconds(1),
        missedHeartbeats: Int = 3,
        retry: RetryPolicy = .standard,
        maxMessageBytes: Int = 1 << 20,
        stopGracePeriod: Duration = .seconds(5)
    ) {
        self.authorityEndpoint = authorityEndpoint
        self.appName = appName
        self.name = name
        self.concurrency = max(1, concurrency)
        self.effectThreads = effectThreads
        self.prefetch = prefetch.map { max(0, $0) }
        self.kinds = kinds
        self.heartbeatInterval = max(heartbeatInterval, .milliseconds(1))
        self.missedHeartbeats = max(1, missedHeartbeats)
        self.retry = retry
        self.maxMessageBytes = max(1_024, maxMessageBytes)
        self.stopGracePeriod = max(stopGracePeriod, .zero)
    }

    /// `<hostname>-<pid>`, the default worker name.
    public static func defaultName() -> String {
        "\(HostName.current() ?? "worker")-\(getpid())"
    }
}
