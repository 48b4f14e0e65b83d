import ReactorMetrics

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
    /// Actions whose mutations are all applied: at once for an action without effects, else
    /// when its last job is done or failed (and the failure hook's mutations applied).
    case actionsApplied = "actions_applied"
    /// Acks sent, for new actions and for resends.
    case acks
    /// Mutations applied by origin: an action's own (sync), emitted by an effect (async), or
    /// from the failure hook of a job that failed for good.
    case mutationsSync = "mutations_sync"
    case mutationsAsync = "mutations_async"
    case mutationsFailure = "mutations_failure"
    /// Jobs taken back from a worker because they ran longer than `--job-timeout`.
    case jobsTimedOut = "jobs_timed_out"
    /// Bytes of every frame read from or sent on each socket (routing envelopes included).
    case actionsBytesReceived = "actions_bytes_received"
    case actionsBytesSent = "actions_bytes_sent"
    case workersBytesReceived = "workers_bytes_received"
    case workersBytesSent = "workers_bytes_sent"
    case feedBytesSent = "feed_bytes_sent"
    /// Journal record bytes written, and the fsync/fdatasync calls made for them.
    case journalBytes = "journal_bytes"
    case journalFsyncs = "journal_fsyncs"
    /// Bytes of the snapshots written to the data directory (their encoded checkpoints).
    case snapshotBytesWritten = "snapshot_bytes_written"
    /// Jobs cancelled by an action (`Mutations.cancel`, or a new effect that cancels in flight).
    case jobsCancelled = "jobs_cancelled"
    /// `emit`, `done` and `failed` reports for a job cancelled while the sender held it, dropped.
    case cancelledResultsDropped = "cancelled_results_dropped"
    /// Mutations applied from the cancel hook (`cancelled(effect:)`) of a cancelled job.
    case mutationsCancel = "mutations_cancel"
    /// `subscribe` messages sent: a subscription run handed to a worker (restarts included).
    case subscriptionsAssigned = "subscriptions_assigned"
    /// Subscription runs taken from a worker that was lost (dead, `bye`, quarantined, new
    /// `ready`) to go to another, resuming after the last applied event.
    case subscriptionRestarts = "subscription_restarts"
    /// Subscription events accepted as actions (buffered ones once their turn came).
    case subscriptionEventsApplied = "subscription_events_applied"
    /// Subscription events of an index already applied (or buffered), dropped.
    case subscriptionEventsDuplicate = "subscription_events_duplicate"
    /// Subscription events of a run that stopped or is not assigned to the sender, dropped.
    case subscriptionEventsStale = "subscription_events_stale"
    /// Subscription events refused: unknown run, index too far ahead, or a payload that is not
    /// the app's action.
    case subscriptionEventsRefused = "subscription_events_refused"
    /// Journal records streamed to standbys (a standby that reconnects may get some again).
    case replicationRecordsSent = "replication_records_sent"
    /// Bytes of journal records and snapshot chunks streamed to standbys.
    case replicationBytesSent = "replication_bytes_sent"
    /// `acks` messages sent: several acks for one client in one message (each ack in it is
    /// also counted in ``acks``).
    case ackBatches = "ack_batches"
    /// Whole encodings of the state (for a fetch, a `snapshot` reply or the feed's snapshot), by
    /// where they were made: on the loop (a small state), off it from a copy of the loop's state
    /// (whose next change copies what it shares with the encoding: a pause for a large state),
    /// or by the snapshot replica (no copy at all).
    case stateEncodesOnLoop = "state_encodes_on_loop"
    case stateEncodesOffLoop = "state_encodes_off_loop"
    case stateEncodesByReplica = "state_encodes_by_replica"

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
        case .actionsApplied: 37
        case .acks: 38
        case .mutationsSync: 39
        case .mutationsAsync: 40
        case .mutationsFailure: 41
        case .jobsTimedOut: 42
        case .actionsBytesReceived: 43
        case .actionsBytesSent: 44
        case .workersBytesReceived: 45
        case .workersBytesSent: 46
        case .feedBytesSent: 47
        case .journalBytes: 48
        case .journalFsyncs: 49
        case .snapshotBytesWritten: 50
        case .jobsCancelled: 51
        case .cancelledResultsDropped: 52
        case .mutationsCancel: 53
        case .subscriptionsAssigned: 54
        case .subscriptionRestarts: 55
        case .subscriptionEventsApplied: 56
        case .subscriptionEventsDuplicate: 57
        case .subscriptionEventsStale: 58
        case .subscriptionEventsRefused: 59
        case .replicationRecordsSent: 60
        case .replicationBytesSent: 61
        case .ackBatches: 62
        case .stateEncodesOnLoop: 63
        case .stateEncodesOffLoop: 64
        case .stateEncodesByReplica: 65
        }
    }
}

/// The authority's counters, a few gauges and its histograms, as one value that can be copied
/// across threads. The `stats` reply carries the counters and gauges (``dictionary``); the
/// Prometheus exposition (``metricFamilies(labels:)``) carries everything.
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
    /// Connections to the feed socket now (TCP and IPC peers: observers, and any other subscriber).
    public var observers: UInt64 = 0
    /// The size of the newest snapshot written to the data directory, in bytes (0 before one).
    public var snapshotBytes: UInt64 = 0
    /// 1 while a snapshot replica writes the snapshots (`--snapshot-replica-above`), else 0.
    public var snapshotReplica: UInt64 = 0
    /// The bytes of journal records the snapshot replica has yet to apply (0 without one): a
    /// replica that keeps falling behind is stopped once this outgrows the state's size.
    public var snapshotReplicaBacklogBytes: UInt64 = 0
    /// Subscription runs the state wants now.
    public var subscriptionsRunning: UInt64 = 0
    /// Of those, runs no worker runs now (none serves their kind yet).
    public var subscriptionsUnassigned: UInt64 = 0
    /// Standbys following this primary now (`--replication`).
    public var standbys: UInt64 = 0
    /// Journal records the best standby has not reported durable yet: what a failover to it
    /// would lose under async replication (0 without a standby).
    public var replicationLag: UInt64 = 0
    /// The last journal record committed (its LSN; 0 without a data directory): how far this
    /// node's journal reaches. Elected standbys compare it to decide which one takes over.
    public var journalLSN: UInt64 = 0
    /// From the start of the loop turn that read an action to its ack handed to ZeroMQ (after
    /// its journal record was committed), in seconds.
    public var ackLatency = Histogram(bounds: Histogram.Bounds.latency)
    /// The time one journal commit spent in fsync/fdatasync, in seconds (commits that synced).
    public var journalFsyncLatency = Histogram(bounds: Histogram.Bounds.latency)
    /// The time a snapshot took to encode, write, fsync and rename, off the loop, in seconds.
    public var snapshotWriteDuration = Histogram(bounds: Histogram.Bounds.duration)
    /// The time one encoding of the whole state took, in seconds: for a fetch, a whole `snapshot`
    /// reply or the feed's snapshot, on the loop or off it (or by the snapshot replica). What a
    /// large state costs each time it is handed out whole.
    public var stateEncodeDuration = Histogram(bounds: Histogram.Bounds.duration)
    /// The size of the state's last whole encoding (or of the snapshot recovered from), in bytes;
    /// 0 before one. Above 1 MiB, fetches, whole replies and feed snapshots are encoded off the loop.
    public var stateBytes: UInt64 = 0

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
        result["observers"] = observers
        result["snapshot_bytes"] = snapshotBytes
        result["state_bytes"] = stateBytes
        result["snapshot_replica"] = snapshotReplica
        result["snapshot_replica_backlog_bytes"] = snapshotReplicaBacklogBytes
        // The ack latency histogram's count and sum (in whole microseconds), so that a client of
        // the stats request (the inspector) can chart the mean latency between two polls.
        result["ack_latency_count"] = ackLatency.count
        result["ack_latency_microseconds"] = UInt64(max(0, ackLatency.sum * 1_000_000).rounded())
        result["subscriptions_running"] = subscriptionsRunning
        result["subscriptions_unassigned"] = subscriptionsUnassigned
        result["standbys"] = standbys
        result["replication_lag_records"] = replicationLag
        result["journal_lsn"] = journalLSN
        return result
    }
}
