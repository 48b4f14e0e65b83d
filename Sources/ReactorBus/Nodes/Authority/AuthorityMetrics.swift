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
    /// DONEs declaring more mutations than the worker sent: the job fails instead of waiting for ever.
    case incompleteReports = "incomplete_reports"
    /// Resends whose payload differs from the accepted original: refused with `conflict`.
    case actionsConflict = "actions_conflict"
    /// Resends from a client whose dedup state was forgotten: refused with `unknown_client`.
    case actionsUnknownClient = "actions_unknown_client"
    /// Quarantines of workers whose jobs kept timing out (a relapse after probation counts again).
    case workersQuarantined = "workers_quarantined"
    /// Quarantined workers that finished a probation job in time and got their capacity back.
    case workersRecovered = "workers_recovered"
    /// `ready` messages announcing more than `--max-worker-capacity`, trusted with that many.
    case capacitiesClamped = "capacities_clamped"
    /// `snapshot` and `stats` requests answered with `busy` because their client had
    /// `--client-queue-bytes` of replies unread.
    case repliesRefusedBytes = "replies_refused_bytes"
    /// Messages on the actions or workers socket over `--max-message-bytes`, answered `too_large`.
    case messagesTooLarge = "messages_too_large"
    /// `snapshot_chunk` requests answered with a chunk.
    case snapshotChunks = "snapshot_chunks"

    /// The counter's position in ``allCases`` (and in the metrics' storage), without hashing
    /// its name: the authority bumps counters for every message.
    var slot: Int {
        switch self {
        case .actionsAccepted: 0
        case .actionsDuplicate: 1
        case .actionsStale: 2
        case .actionsBusy: 3
        case .badActions: 4
        case .malformed: 5
        case .unsupportedVersion: 6
        case .unknownKind: 7
        case .mutationsApplied: 8
        case .jobsDispatched: 9
        case .jobsRedispatched: 10
        case .jobsDone: 11
        case .jobsFailed: 12
        case .emitsDuplicate: 13
        case .emitsBuffered: 14
        case .badMutations: 15
        case .foreignReports: 16
        case .unknownJobs: 17
        case .unknownWorkerMessages: 18
        case .wrongApp: 19
        case .workersRegistered: 20
        case .workersLost: 21
        case .snapshotsPublished: 22
        case .snapshotRequests: 23
        case .journalRecords: 24
        case .journalCommits: 25
        case .snapshotsWritten: 26
        case .handshakesRefused: 27
        case .incompleteReports: 28
        case .actionsConflict: 29
        case .actionsUnknownClient: 30
        case .workersQuarantined: 31
        case .workersRecovered: 32
        case .capacitiesClamped: 33
        case .repliesRefusedBytes: 34
        case .messagesTooLarge: 35
        case .snapshotChunks: 36
        }
    }
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
    /// Clients the idempotent-retry ledger remembers.
    public var clients: UInt64 = 0
    /// Forgotten clients whose tombstone the ledger keeps.
    public var forgottenClients: UInt64 = 0
    /// Workers in quarantine now.
    public var quarantinedWorkers: UInt64 = 0
    /// The feed's high-water mark in messages per subscriber, as derived from its byte budget.
    public var feedHighWaterMark: UInt64 = 0

    /// Creates zeroed metrics.
    public init() {}

    /// A counter's value.
    public subscript(counter: AuthorityCounter) -> UInt64 {
        get { counts[counter.slot] }
        set { counts[counter.slot] = newValue }
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
        result["clients"] = clients
        result["clients_forgotten"] = forgottenClients
        result["quarantined_workers"] = quarantinedWorkers
        result["feed_high_water_mark"] = feedHighWaterMark
        return result
    }
}
