/// What the authority counts. Names are the keys of the protocol's `stats` reply.
public enum AuthorityCounter: String, CaseIterable, Sendable {
    case actionsAccepted = "actions_accepted"
    case actionsDuplicate = "actions_duplicate"
    case actionsStale = "actions_stale"
    case actionsBusy = "actions_busy"
    case badActions = "bad_actions"
    case malformed
    case unsupportedVersion = "unsupported_version"
    case unknownKind = "unknown_kind"
    case mutationsApplied = "mutations_applied"
    case jobsDispatched = "jobs_dispatched"
    case jobsRedispatched = "jobs_redispatched"
    case jobsDone = "jobs_done"
    case jobsFailed = "jobs_failed"
    case emitsDuplicate = "emits_duplicate"
    case emitsBuffered = "emits_buffered"
    case badMutations = "bad_mutations"
    case foreignReports = "foreign_reports"
    case unknownJobs = "unknown_jobs"
    case unknownWorkerMessages = "unknown_worker_messages"
    case wrongApp = "wrong_app"
    case workersRegistered = "workers_registered"
    case workersLost = "workers_lost"
    case snapshotsPublished = "snapshots_published"
    case snapshotRequests = "snapshot_requests"
    case journalRecords = "journal_records"
    case journalCommits = "journal_commits"
    case snapshotsWritten = "snapshots_written"
    case handshakesRefused = "handshakes_refused"
}

/// The authority's counters plus a few gauges, as one value that can be copied across threads.
public struct AuthorityMetrics: Sendable, Equatable {
    private var counts = [UInt64](repeating: 0, count: AuthorityCounter.allCases.count)
    /// The state version.
    public var version: UInt64 = 0
    /// The last accepted action's sequence number.
    public var actionSeq: UInt64 = 0
    /// Jobs not finished.
    public var openJobs: UInt64 = 0
    /// Workers known.
    public var workers: UInt64 = 0
    /// Jobs waiting for a worker.
    public var queuedJobs: UInt64 = 0

    private static let index: [AuthorityCounter: Int] = Dictionary(uniqueKeysWithValues: AuthorityCounter.allCases.enumerated().map { ($1, $0) })

    /// Creates zeroed metrics.
    public init() {}

    /// A counter's value.
    public subscript(counter: AuthorityCounter) -> UInt64 {
        get { counts[Self.index[counter] ?? 0] }
        set { counts[Self.index[counter] ?? 0] = newValue }
    }

    /// Counters and gauges by name, as the `stats` reply carries them.
    public var dictionary: [String: UInt64] {
        var result: [String: UInt64] = [:]
        for counter in AuthorityCounter.allCases { result[counter.rawValue] = self[counter] }
        result["version"] = version
        result["action_seq"] = actionSeq
        result["open_jobs"] = openJobs
        result["workers"] = workers
        result["queued_jobs"] = queuedJobs
        return result
    }
}
