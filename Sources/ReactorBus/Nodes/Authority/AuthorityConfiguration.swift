import ReactorStorage
/// Everything an authority node needs to know besides its app.
public struct AuthorityConfiguration: Sendable {
    /// The app's name: sent with snapshots, checked against workers' `ready` and stored files.
    public var appName: String
    /// The app's schema version, the versions its peers may speak, and the migrations that read
    /// older data directories (default: version 1, no migrations).
    public var schema = AppSchema()
    /// Where clients send actions (ROUTER, bound).
    public var actionsEndpoint: String
    /// Where workers connect (ROUTER, bound).
    public var workersEndpoint: String
    /// Where snapshots and mutations are published (XPUB, bound; peers use SUB).
    public var feedEndpoint: String
    /// Heartbeat interval towards workers; a worker silent for `missedHeartbeats` of them is dead.
    public var heartbeatInterval: Duration = .seconds(1)
    /// How many heartbeat intervals of silence make a worker dead.
    public var missedHeartbeats: Int = 3
    /// A job that runs longer than this on one worker is given to another.
    public var jobTimeout: Duration = .seconds(60)
    /// The most jobs one worker is given at once: a worker announcing a larger capacity is
    /// trusted with this many (and the authority logs it).
    public var maxWorkerCapacity: Int = 256
    /// Job timeouts in a row (no job reported in time in between) after which a worker is
    /// quarantined: its jobs go to other workers and it gets none for a cool-off of one
    /// `jobTimeout` (doubled at each relapse), then one at a time until one ends in time.
    /// 0 never quarantines.
    public var quarantineAfter: Int = 3
    /// Messages read from one socket per loop turn before the batch is flushed.
    ///
    /// Acks, jobs and the feed leave at the end of a turn, so a long turn holds them all back.
    /// 256 measured best on the 2-core development machine (a client pipelining 1,000 actions):
    /// against 2,048, 7.5 µs instead of 9.1 µs of authority CPU per sync action and 30% more
    /// actions per second; 64 and 128 spent more per turn than they saved.
    public var maxBatch: Int = 256
    /// Largest message accepted on the actions and workers sockets: a larger one is answered
    /// `too_large` (and counted and logged) and changes nothing. It bounds what the authority
    /// accepts, never what it sends: states of any size go out (snapshots in chunks). ZeroMQ drops
    /// messages beyond 4 times this plus 16 MiB unanswered, resetting the sender's connection.
    public var maxMessageBytes: Int64 = 1 << 20
    /// When the feed publishes full snapshots besides every mutation (``FeedSnapshotPolicy``).
    public var feedSnapshots = FeedSnapshotPolicy.adaptive
    /// Actions of one client whose effects have not finished, beyond which it gets `busy`.
    public var maxInFlightPerClient: Int = 10_000
    /// What the idempotent-retry ledger remembers: acks per client, clients, tombstones of
    /// forgotten clients (docs/PROTOCOL.md, "Idempotent retry").
    public var clientLedger = ClientLedgerLimits()
    /// Messages queued per feed subscriber before the feed drops for that subscriber (at most;
    /// ``feedQueueBytes`` makes it smaller for large messages).
    public var feedHighWaterMark: Int = 10_000
    /// Bytes queued per feed subscriber before the feed drops for that subscriber. The authority
    /// derives the feed's high-water mark in messages from it and the largest message published
    /// so far (at least 2 messages), so one stalled subscriber costs at most this much memory.
    public var feedQueueBytes: Int = 64 << 20
    /// Bytes of `snapshot` and `stats` replies queued for one client (sent, not yet taken by the
    /// kernel) beyond which its further requests get `busy` instead of a reply; one reply always
    /// goes out when nothing is queued for the client. Acks and errors are never refused.
    public var clientQueueBytes: Int = 64 << 20
    /// An idle authority publishes a heartbeat with its version this often.
    public var idleFeedInterval: Duration = .seconds(1)
    /// Where and how to keep state across restarts; `nil` keeps it in memory only.
    public var persistence: PersistenceConfiguration?
    /// CURVE keys and allowlists; `nil` leaves the sockets in plain text.
    public var security: AuthoritySecurity?
    /// Journal streaming to standbys, or following a primary (``ReplicationConfiguration``);
    /// `nil` for neither.
    public var replication: ReplicationConfiguration?
    /// The term and lease of an elected authority (``Leadership``); `nil` for one that runs
    /// without an election and may always act.
    public var leadership: Leadership?

    /// Creates a configuration with the defaults above.
    public init(appName: String, actionsEndpoint: String, workersEndpoint: String, feedEndpoint: String) {
        self.appName = appName
        self.actionsEndpoint = actionsEndpoint
        self.workersEndpoint = workersEndpoint
        self.feedEndpoint = feedEndpoint
    }
}

/// Durable state: a data directory with a journal and snapshots.
public struct PersistenceConfiguration: Sendable {
    /// The data directory (created if missing).
    public var directory: String
    /// When the journal is fsynced relative to acks.
    public var fsync: FsyncPolicy = .batch
    /// A snapshot is written after this many journal records ...
    public var snapshotEveryRecords: UInt64 = 100_000
    /// ... or this long after the last one, whichever comes first (if anything changed).
    public var snapshotInterval: Duration = .seconds(60)
    /// What to do about journal damage other than a torn tail: refuse to start (the default) or
    /// cut the journal there and lose what follows (``JournalRepairPolicy/truncate``).
    public var repair: JournalRepairPolicy = .refuse
    /// Where snapshots go; `nil` (the default) keeps them in `directory/snapshots`. A directory
    /// on another filesystem than the journal keeps a snapshot's writes from holding up the
    /// journal's fsync, and so the acks (on ext4 one journal commit waits for every file's
    /// data). It is locked like the data directory; recovery reads snapshots from here only.
    public var snapshotDirectory: String?
    /// Once a snapshot of this many bytes or more was written (or recovered), the next ones are
    /// written from a replica of the state that a thread of its own keeps by replaying the
    /// journal's records (a snapshot replica), instead of from the loop's own state.
    ///
    /// A snapshot of the loop's state makes the loop copy all of it at its next change: a pause
    /// of about 100 ms for a million small values, once per snapshot. A replica removes that
    /// pause but applies every record a second time (on a thread at nice +10) and holds the
    /// state's memory a second time: on 2 busy cores about a fifth fewer actions/s. While it runs
    /// it also encodes the state for the feed's snapshots, fetches and whole `snapshot` replies,
    /// which would otherwise cost the loop the same copy each. For apps whose large state must
    /// not stall the loop. `nil` (the default): never; 0: always.
    public var replicaSnapshotsAbove: Int?

    /// Creates a configuration with the defaults above.
    public init(directory: String, fsync: FsyncPolicy = .batch) {
        self.directory = directory
        self.fsync = fsync
    }
}
