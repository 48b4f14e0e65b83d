import ReactorMetrics

/// What the authority's loop saw while carrying out outboxes, handed back to the engine as input.
///
/// The engine is the one writer of ``AuthorityMetrics``: the loop and the durability never
/// change a counter, they report what happened (a commit, a snapshot written, a reply refused)
/// and the engine counts it in ``AuthorityEngine/absorb(_:)``.
package struct AuthorityLoopReport: Equatable, Sendable {
    /// Journal records committed.
    package var journalRecords: UInt64 = 0
    /// Journal commits.
    package var journalCommits: UInt64 = 0
    /// Snapshots written to the data directory.
    package var snapshotsWritten: UInt64 = 0
    /// Snapshots published on the feed.
    package var snapshotsPublished: UInt64 = 0
    /// CURVE handshakes refused (from the sockets' monitors).
    package var handshakesRefused: UInt64 = 0
    /// Request replies refused with `busy` for their client's unread bytes.
    package var repliesRefusedBytes: UInt64 = 0
    /// The feed's high-water mark now, if the loop measured it.
    package var feedHighWaterMark: UInt64?
    /// Connections to the feed socket now, if the loop counted them.
    package var observers: UInt64?
    /// Acks handed to ZeroMQ, and how long each waited since its turn began.
    package var acks: UInt64 = 0
    /// `acks` messages handed to ZeroMQ (their acks are in ``acks``).
    package var ackBatches: UInt64 = 0
    package var ackLatency = Histogram(bounds: Histogram.Bounds.latency)
    /// Bytes read from and sent on each socket.
    package var actionsBytesReceived: UInt64 = 0
    package var actionsBytesSent: UInt64 = 0
    package var workersBytesReceived: UInt64 = 0
    package var workersBytesSent: UInt64 = 0
    package var feedBytesSent: UInt64 = 0
    /// Journal bytes written and fsyncs made, and each syncing commit's time in them.
    package var journalBytes: UInt64 = 0
    package var journalFsyncs: UInt64 = 0
    package var journalFsyncLatency = Histogram(bounds: Histogram.Bounds.latency)
    /// Bytes of the snapshots written, the newest one's size, and how long each took.
    package var snapshotBytesWritten: UInt64 = 0
    package var lastSnapshotBytes: UInt64?
    /// Whether a snapshot replica writes the snapshots now, and its backlog (``SnapshotReplica``).
    package var snapshotReplica: SnapshotReplicaGauges?

    /// A snapshot replica's gauges, as the durability last read them.
    package struct SnapshotReplicaGauges: Equatable, Sendable {
        package var running: Bool
        package var backlogBytes: UInt64
    }
    /// Journal records and bytes streamed to standbys.
    package var replicationRecordsSent: UInt64 = 0
    package var replicationBytesSent: UInt64 = 0
    /// Standbys following now, and the records the best one lacks, if the loop measured them.
    package var standbys: UInt64?
    package var replicationLag: UInt64?
    /// The journal's last committed LSN, when it moved since the last report.
    package var journalLSN: UInt64?
    package var snapshotWriteDuration = Histogram(bounds: Histogram.Bounds.duration)

    /// Nothing seen yet.
    package init() {}

    /// Nothing seen yet, made once: a loop starts a new report every turn, and making one
    /// checks the bounds of its three histograms.
    package static let none = AuthorityLoopReport()

    /// Whether there is nothing to count.
    package var isEmpty: Bool { self == Self.none }

    /// This report, leaving ``none`` in its place: handed on without a copy.
    package mutating func take() -> AuthorityLoopReport {
        var taken = Self.none
        swap(&taken, &self)
        return taken
    }

    /// Adds `other`'s counts and observations to these; its measurements of the moment (the
    /// feed's high-water mark, its connections, the newest snapshot's size), if any, replace these.
    package mutating func merge(_ other: AuthorityLoopReport) {
        journalRecords += other.journalRecords
        journalCommits += other.journalCommits
        snapshotsWritten += other.snapshotsWritten
        snapshotsPublished += other.snapshotsPublished
        handshakesRefused += other.handshakesRefused
        repliesRefusedBytes += other.repliesRefusedBytes
        if let mark = other.feedHighWaterMark { feedHighWaterMark = mark }
        if let observers = other.observers { self.observers = observers }
        acks += other.acks
        ackBatches += other.ackBatches
        ackLatency.merge(other.ackLatency)
        actionsBytesReceived += other.actionsBytesReceived
        actionsBytesSent += other.actionsBytesSent
        workersBytesReceived += other.workersBytesReceived
        workersBytesSent += other.workersBytesSent
        feedBytesSent += other.feedBytesSent
        journalBytes += other.journalBytes
        journalFsyncs += other.journalFsyncs
        journalFsyncLatency.merge(other.journalFsyncLatency)
        snapshotBytesWritten += other.snapshotBytesWritten
        if let bytes = other.lastSnapshotBytes { lastSnapshotBytes = bytes }
        if let replica = other.snapshotReplica { snapshotReplica = replica }
        snapshotWriteDuration.merge(other.snapshotWriteDuration)
        replicationRecordsSent += other.replicationRecordsSent
        replicationBytesSent += other.replicationBytesSent
        if let standbys = other.standbys { self.standbys = standbys }
        if let lag = other.replicationLag { replicationLag = lag }
        if let lsn = other.journalLSN { journalLSN = lsn }
    }
}
