import MessagePack
import ReactorCore
import ReactorLog
import ReactorStorage
import ZeroMQ

/// The authority's journal and snapshots, and the rules for using them.
///
/// It never reads the engine during a turn: ``checkpointDemand(now:)`` says, before the turn's
/// outbox is taken, when that outbox must carry a checkpoint; the loop hands it the outbox's
/// records and checkpoint; what it did (commits, snapshots written) waits in ``takeReport()``
/// for the loop to give the engine, which alone counts it.
///
/// - Every batch's records are appended and committed before its acks leave (`batch`), or each
///   action's record before its own ack (`always`); `none` commits without fsync. Under `batch`
///   the commit is a group commit: ``append(_:)`` writes the records to the kernel and a
///   ``JournalSyncer`` thread `fdatasync`s them, so the loop goes on reading (and answering pings)
///   while the disk works; the loop holds the batch's acks, jobs and feed messages until
///   ``durableLSN`` reaches the LSN ``append(_:)`` returned (``CommitQueue``). Syncs that fall due
///   while one runs are coalesced: one `fdatasync` covers every batch written meanwhile.
/// - A snapshot (the engine's checkpoint) is written every `snapshotEveryRecords` records or
///   `snapshotInterval`, and the journal is compacted up to what the older kept snapshot covers.
///   The loop only takes the checkpoint (a copy-on-write copy) and the LSN it covers exactly; a
///   ``SnapshotWriter`` encodes, writes and fsyncs it on its own thread — once that LSN is
///   durable in the journal, so a snapshot never gets ahead of the journal — and the loop
///   compacts the journal when it collects the outcome on a later turn. One snapshot at a time:
///   one that falls due while another is being written waits for it.
/// - Once a snapshot reaches ``PersistenceConfiguration/replicaSnapshotsAbove`` bytes (one
///   written, or the one recovered from), the loop stops taking checkpoints: a
///   ``SnapshotReplica`` applies the records the loop journals to a copy of the state of its own
///   and writes the snapshots from it, so the loop never shares its state with a snapshot and
///   never copies it. A replica that fails stops, and checkpoints take over again.
/// - A failed snapshot write is logged once and retried after 1 s, 2 s, 4 s ... (at most 60 s)
///   from the failed attempt's start, not on every batch; the journal keeps every record meanwhile.
/// - Recovery loads the newest valid snapshot and replays the journal after it.
/// - ``close(final:)`` waits for the snapshot being written, then writes the final one.
final class AuthorityDurability<R: Reactor> {
    private let journal: Journal
    /// The lock on a snapshot directory outside the data directory, held until close.
    private let snapshotLock: DirectoryLock?
    private let snapshots: SnapshotStore
    private let configuration: PersistenceConfiguration
    private let app: String
    private let logger: Logger
    private let decoder = MessagePackDecoder()
    /// Packs each journal record (``AuthorityRecord/pack(into:)``); reused across records.
    private let recordWriter = MessagePackWriter()
    /// The LSN the newest snapshot covers, written or being written (or waiting for its LSN to
    /// be durable); records after it are what the next snapshot would add.
    private var coveredLSN: UInt64 = 0
    /// The LSN the newest snapshot written covers (where a failed write falls back to).
    private var writtenLSN: UInt64 = 0
    private var lastSnapshotAt = MonotonicClock.milliseconds()
    /// Started at the first snapshot, stopped by `close`.
    private var writer: SnapshotWriter?
    /// The snapshot being written: its LSN, when it started, and whether the replica writes it.
    private var inProgress: (lsn: UInt64, startedAt: UInt64, byReplica: Bool)?
    /// A snapshot due whose LSN is not yet durable: written once it is, from the checkpoint
    /// taken, or (`nil`) by the replica, which was given its mark.
    private var awaitingDurable: (checkpoint: AuthorityCheckpoint<R>?, lsn: UInt64, takenAt: UInt64)?
    /// What a snapshot replica is made of; set by the loop (a primary's or a standby's) before
    /// ``recover(into:schema:markSchema:)``; without it, snapshots are always taken from checkpoints.
    var replicaSetup: SnapshotReplica<R>.Setup?
    /// Writes the snapshots once they are large; `nil` before (and after one failed).
    private var replica: SnapshotReplica<R>?
    /// The size of the newest snapshot written or recovered from.
    private var lastSnapshotBytes = 0
    /// The LSN and payload CRC-32C of the last record a standby appended: its `hello` names them
    /// before they may have reached `write(2)`, where ``recordCRC(at:)`` could read them.
    private var lastReplicated: (lsn: UInt64, crc: UInt32)?
    /// A replica failed in this process: checkpoints from then on.
    private var replicaRetired = false
    /// Why the replica, which failed while writing a snapshot, is retired once that snapshot is
    /// collected (its outcome comes from the replica alone); meanwhile it is asked for nothing.
    private var replicaFailing: String?
    /// The LSN of the snapshot being written from a checkpoint, the schema version of the records
    /// journaled after it (and those records), and where the writer leaves the checkpoint should
    /// its snapshot be large: a replica's start.
    private var seed: (lsn: UInt64, schema: UInt32, records: [JournalRecord], checkpoint: SnapshotReplica<R>.Seed)?
    /// Runs the `fdatasync` of group commits (`batch` policy); started at the first commit.
    private var syncer: JournalSyncer?
    /// Where the syncer's outcomes arrive; the loop polls it (``syncOutcomes``).
    let syncOutcomes: Mailbox<JournalSyncer.Outcome>
    /// Failed attempts in a row, and when the next may start.
    private var failedAttempts = 0
    private var retryAt: UInt64?
    /// Where the writer thread puts snapshots; `nil` for a ``SnapshotStore`` on the data
    /// directory. Tests set it (before the first snapshot) to a slow or failing destination.
    var snapshotDestination: (@Sendable () throws -> any SnapshotDestination)?
    /// Replaces the group commit's `fdatasync(fd)`; `nil` for the real one. Tests set it (before
    /// the first commit) to a slow or failing disk.
    var syncCall: (@Sendable (_ fd: Int32, _ path: String) throws -> Void)?
    /// Set when the journal failed: the node must not ack anything any more.
    private(set) var failure: (any Error)?
    /// Commits and snapshots written since the last ``takeReport()``.
    private var report = AuthorityLoopReport()
    /// The committed LSN the last report carried (`nil` before the first report).
    private var reportedLSN: UInt64?

    /// Whether every action's record is committed before its own ack.
    var flushesEachAction: Bool { configuration.fsync == .always }

    /// Every record through this LSN is committed (on disk, per the fsync policy): what waits for
    /// it may leave.
    var durableLSN: UInt64 { journal.committedLSN }

    /// The journal's last record: what a turn without records of its own waits for.
    var lastLSN: UInt64 { journal.lastLSN }

    /// Records since the newest snapshot (written, being written or waiting).
    private var recordsSinceSnapshot: UInt64 { journal.lastLSN > coveredLSN ? journal.lastLSN - coveredLSN : 0 }

    init(configuration: PersistenceConfiguration, app: String, logger: Logger) throws {
        self.configuration = configuration
        self.app = app
        self.logger = logger
        syncOutcomes = try Mailbox()
        journal = try Journal(directory: configuration.directory, app: app, policy: configuration.fsync, repair: configuration.repair)
        // The data directory's lock does not reach a snapshot directory elsewhere: lock it too.
        snapshotLock = try configuration.snapshotDirectory.map { try DirectoryLock.lock(creating: $0) }
        snapshots = try SnapshotStore(directory: configuration.directory, app: app, snapshotDirectory: configuration.snapshotDirectory)
        let report = journal.recoveryReport
        if let damage = report.damage {
            if damage.isTornTail {
                logger.warning("journal: cut a torn tail (a write a crash cut short, never acknowledged): \(damage)")
            } else {
                let lost = damage.lostLSNs.map { "lost \($0.count) record(s) (LSN \($0.lowerBound)...\($0.upperBound))" } ?? "lost no intact record"
                logger.warning("journal damaged, cut by the truncate repair policy: \(lost); \(damage)")
            }
        }
        logger.info("data directory \(configuration.directory): \(report.recordsKept) journal record(s), fsync \(configuration.fsync)")
    }

    /// Loads the newest snapshot and replays the journal after it into `engine`, migrating what
    /// an older schema version of the app stored (`schema`); then marks the journal with this
    /// build's schema version if its records so far were of another.
    ///
    /// A standby passes `markSchema: false`: its journal holds exactly its primary's records.
    @discardableResult
    func recover(into engine: AuthorityEngine<R>, schema: AppSchema = AppSchema(), markSchema: Bool = true) throws -> RecordReplayer<R> {
        let migrator = SchemaMigrator<R>(schema: schema, app: app)
        var after: UInt64 = 0
        /// The schema version of the snapshot (1 without one).
        var snapshotSchema: UInt32 = 1
        /// The snapshot's bytes, when large enough to start a replica from (with the records after it).
        var replicaStart: (bytes: [UInt8], records: [JournalRecord])?
        do {
            if let snapshot = try snapshots.loadNewest() {
                for rejection in snapshot.rejected { logger.warning("snapshot rejected: \(rejection)") }
                let (checkpoint, stored) = try migrator.load(snapshot.payload, file: snapshot.file)
                if stored != schema.version {
                    logger.notice("migrated snapshot \(snapshot.file) from schema version \(stored) to \(schema.version)")
                }
                snapshotSchema = stored
                engine.restore(checkpoint)
                after = snapshot.lsn
                lastSnapshotBytes = snapshot.payload.count
                engine.noteStateBytes(snapshot.payload.count)
                if wantsReplica(forSnapshotOf: snapshot.payload.count) { replicaStart = (snapshot.payload, []) }
                logger.info("restored snapshot at journal record \(snapshot.lsn): version \(checkpoint.sequencer.version)")
            }
        } catch PersistenceError.noValidSnapshot where journal.firstLSN <= 1 {
            logger.warning("no valid snapshot; replaying the whole journal")
        }
        if after > journal.lastLSN {
            // Appending would reuse LSNs the snapshot already covers, and the next restart would
            // skip those records.
            let journalEnd = journal.lastLSN
            guard configuration.repair == .truncate else {
                throw PersistenceError.snapshotBeyondJournal(
                    snapshotLSN: after, journalLastLSN: journalEnd, directory: configuration.directory)
            }
            let moved = try journal.continueAfter(after)
            logger.warning("journal ends at LSN \(journalEnd), before the newest snapshot (LSN \(after)): under the truncate repair policy the journal continues after the snapshot; moved aside \(moved.joined(separator: ", "))")
        }
        var reader = try journal.reader(after: after)
        var replayer = RecordReplayer<R>(schema: schema, app: app, stored: snapshotSchema)
        var replayed = 0
        while let record = try reader.next() {
            try replayer.replay(record, into: engine)
            replicaStart?.records.append(record)
            replayed += 1
        }
        let migrated = replayer.migrated
        if migrated.records > 0 {
            logger.notice("migrated \(migrated.records) journal record(s) from schema version(s) \(migrated.from.sorted().map(String.init).joined(separator: ", ")) to \(schema.version)")
        }
        let stored = replayer.stored
        if stored != schema.version, markSchema {
            // Records from here on are of this build's version; say so for the next reader.
            recordWriter.reset()
            AuthorityRecord.schema(version: schema.version).pack(into: recordWriter)
            let lsn = try journal.append(recordWriter.bytes)
            replicaStart?.records.append(JournalRecord(lsn: lsn, payload: recordWriter.bytes))
            try journal.commit()
        }
        coveredLSN = after
        writtenLSN = after
        if let replicaStart, let setup = replicaSetup {
            replica = SnapshotReplica(setup: setup, snapshot: replicaStart.bytes, lsn: after, records: replicaStart.records, makeDestination: destinationMaker)
            logger.info("snapshots are written from a replica of the state: the one recovered has \(replicaStart.bytes.count) bytes (--snapshot-replica-above \(configuration.replicaSnapshotsAbove ?? 0))")
        }
        let state = engine.currentMetrics()
        logger.info("recovered version \(state.version), action \(state.actionSeq), \(state.openJobs) open job(s) (\(replayed) record(s) replayed)")
        return replayer
    }

    /// What was committed and written since the last call, for the engine to count.
    func takeReport() -> AuthorityLoopReport {
        let committed = journal.committedLSN
        if committed != reportedLSN {
            report.journalLSN = committed
            reportedLSN = committed
        }
        report.snapshotReplica = .init(running: replica != nil, backlogBytes: UInt64(max(0, replica?.backlogBytes ?? 0)))
        return report.take()
    }

    /// Appends a batch's records and commits them: under `batch` by handing the `fdatasync` to
    /// the syncer thread (the records are durable once ``durableLSN`` reaches the result), under
    /// `always` and `none` before returning. On failure the node must stop acking.
    ///
    /// - Returns: the LSN of the batch's last record, which must be durable before anything of
    ///   the batch leaves.
    func append(_ records: [AuthorityRecord]) throws -> UInt64 {
        do {
            // Appending may rotate to a new segment, which writes and syncs the finished one.
            var followed: [JournalRecord]? = followsRecords ? [] : nil
            let request = try measured { () throws -> Journal.SyncRequest? in
                for record in records {
                    recordWriter.reset()
                    record.pack(into: recordWriter)
                    let payload = recordWriter.bytes
                    let lsn = try journal.append(payload)
                    recent?.append(lsn: lsn, payload: payload)
                    followed?.append(JournalRecord(lsn: lsn, payload: payload))
                }
                if configuration.fsync == .batch { return try journal.write() }
                try journal.commit()
                return nil
            }
            if let request { startedSyncer().submit(request) }
            if let followed { follow(followed) }
        } catch {
            failure = error
            throw error
        }
        report.journalRecords += UInt64(records.count)
        report.journalCommits += 1
        return journal.lastLSN
    }

    // MARK: Replication

    /// The newest records appended, kept for streaming to standbys (`nil`: not kept).
    var recent: RecentRecords?

    /// The oldest LSN the journal still has.
    var firstLSN: UInt64 { journal.firstLSN }

    /// The journal's records after `lsn` that reached `write(2)` (for a standby that is behind).
    func reader(after lsn: UInt64) throws -> JournalReader { try journal.reader(after: lsn) }

    /// The CRC-32C of the payload of the journal's record at `lsn`, `nil` when the journal does
    /// not have it (compacted, not yet written, or beyond its end): for a primary that checks a
    /// standby's journal against its own, and a standby that says where its journal ends.
    func recordCRC(at lsn: UInt64) -> UInt32? {
        guard lsn > 0, lsn >= journal.firstLSN, lsn <= journal.lastLSN else { return nil }
        if let last = lastReplicated, last.lsn == lsn { return last.crc }
        guard var reader = try? journal.reader(after: lsn - 1), let record = try? reader.next(), record.lsn == lsn else { return nil }
        return CRC32C.checksum(record.payload)
    }

    /// The newest valid snapshot's LSN and payload, `nil` without one (for a standby whose
    /// records were compacted away).
    func newestSnapshot() throws -> (lsn: UInt64, bytes: [UInt8])? {
        try snapshots.loadNewest().map { ($0.lsn, $0.payload) }
    }

    /// A standby's append: `payloads` are its primary's records from LSN `first` (which must
    /// follow this journal's last), journaled unchanged; ``commitReplicated()`` commits them
    /// (once for everything a turn received: a group commit). Returns the records journaled, at
    /// their LSNs.
    @discardableResult
    func appendReplicated(_ payloads: [[UInt8]], first: UInt64) throws -> [JournalRecord] {
        guard first == journal.lastLSN + 1 else {
            throw ReplicationError.outOfSequence(expected: journal.lastLSN + 1, received: first)
        }
        var journaled: [JournalRecord] = []
        journaled.reserveCapacity(payloads.count)
        do {
            try measured {
                for payload in payloads { journaled.append(JournalRecord(lsn: try journal.append(payload), payload: payload)) }
            }
        } catch {
            failure = error
            throw error
        }
        if followsRecords { follow(journaled) }
        if let last = journaled.last { lastReplicated = (last.lsn, CRC32C.checksum(last.payload)) }
        report.journalRecords += UInt64(payloads.count)
        return journaled
    }

    /// Commits what ``appendReplicated(_:first:)`` appended, under the fsync policy, on this
    /// thread. Returns the LSN now committed.
    func commitReplicated() throws -> UInt64 {
        guard journal.lastLSN > journal.committedLSN else { return journal.committedLSN }
        do {
            try measured { try journal.commit() }
        } catch {
            failure = error
            throw error
        }
        report.journalCommits += 1
        return journal.committedLSN
    }

    /// A standby's install of its primary's snapshot covering through `lsn` (later than this
    /// journal's end): written to the snapshot store, and the journal continues after it. A
    /// replica starts again from the installed bytes (when they are large enough): the state it
    /// had is the one the snapshot replaces.
    func installSnapshot(_ bytes: [UInt8], lsn: UInt64) throws {
        finishSnapshotInProgress()
        // What was due covers records the snapshot replaces; the replica follows them no more.
        awaitingDurable = nil
        seed = nil
        replica?.stop(waiting: false)
        replica = nil
        try journal.commit()
        try SnapshotStore(directory: configuration.directory, app: app, snapshotDirectory: configuration.snapshotDirectory)
            .write(bytes, coveringThrough: lsn)
        let moved = try journal.continueAfter(lsn)
        if !moved.isEmpty { logger.notice("journal continues after the primary's snapshot at LSN \(lsn); older segments moved aside: \(moved.joined(separator: ", "))") }
        coveredLSN = lsn
        writtenLSN = lsn
        lastSnapshotBytes = bytes.count
        if wantsReplica(forSnapshotOf: bytes.count), let setup = replicaSetup {
            replica = SnapshotReplica(setup: setup, snapshot: bytes, lsn: lsn, records: [], makeDestination: destinationMaker)
            logger.info("snapshots are written from a replica of the state: the one installed has \(bytes.count) bytes (--snapshot-replica-above \(configuration.replicaSnapshotsAbove ?? 0))")
        }
    }

    /// Takes the syncer's outcomes (after the loop's poller found ``syncOutcomes`` readable):
    /// ``durableLSN`` moves, and a checkpoint that waited for it starts being written.
    ///
    /// - Throws: the failed sync's error: the journal is failed and the node must stop acking.
    func collectSyncs(now: UInt64) throws {
        for outcome in syncOutcomes.drain() {
            if case .removed(let paths, let error) = outcome {
                if let error {
                    logger.error("deleting compacted journal segments stopped after \(paths.count) of them (nothing lost: the one that failed and every later one stay, hold only records a snapshot covers, and are deleted, oldest first, at the next compaction or sync): \(error)")
                } else {
                    logger.debug("deleted \(paths.count) compacted journal segment(s)")
                }
            }
            do {
                try measured { try journal.confirm(outcome) }
            } catch {
                failure = error
                throw error
            }
        }
        startDurableCheckpoint(now: now)
    }

    /// Commits everything written so far on this thread, waiting for the disk (at a stop, so
    /// that every held reply can leave).
    func commitNow() throws {
        do {
            try measured { try journal.commit() }
        } catch {
            failure = error
            throw error
        }
        if journal.committedLSN > 0 { startDurableCheckpoint(now: MonotonicClock.milliseconds()) }
    }

    private func startedSyncer() -> JournalSyncer {
        if let syncer { return syncer }
        let outcomes = syncOutcomes
        let started = JournalSyncer(name: "journal-sync", sync: syncCall) { outcomes.post($0) }
        syncer = started
        return started
    }

    /// Before a turn's outbox is taken: collects a finished snapshot (compacting the journal),
    /// then says how many of the turn's records make a snapshot due (0: due now), so the outbox
    /// carries the checkpoint; `nil` while one is being written, the journal failed, or a failed
    /// one's retry is not due. Due when enough records or time have passed, or at a retry.
    /// With a replica, never: the replica writes the snapshots (``snapshot(_:coveringThrough:at:now:)``).
    func checkpointDemand(now: UInt64) -> Int? {
        collectSnapshot(now: now)
        guard inProgress == nil, awaitingDurable == nil, failure == nil else { return nil }
        if let replica {
            // Its backlog may take as much memory as a copy of the state, the replica's own cost.
            let limit = max(lastSnapshotBytes, Self.minimumReplicaBacklog)
            if replica.backlogBytes > limit {
                retireReplica(because: "its backlog of records to apply reached \(replica.backlogBytes) bytes")
            } else {
                return nil
            }
        }
        return recordsUntilDue(now: now)
    }

    /// Collects a snapshot written meanwhile (compacting the journal) and starts one whose LSN
    /// became durable, without asking for the next: for a loop with no turn of records to do it
    /// (a standby whose primary is quiet), so the journal and the metrics do not wait for one.
    func collectSnapshot(now: UInt64) {
        if let inProgress, let outcome = inProgress.byReplica ? replica?.takeOutcome() : writer?.takeOutcome() { finish(outcome) }
        startDurableCheckpoint(now: now)
    }

    /// 0 when a snapshot is due (if the turn adds a record, for a snapshot needs at least one
    /// since the last one), else the records after which it is; `nil` while a failed one's retry
    /// is not due.
    private func recordsUntilDue(now: UInt64) -> Int? {
        // Whatever else is due, a snapshot needs at least one record since the last one.
        let anyRecords = recordsSinceSnapshot > 0 ? 0 : 1
        if let retryAt {
            return now >= retryAt ? anyRecords : nil
        }
        if now >= lastSnapshotAt + configuration.snapshotInterval.wholeMilliseconds { return anyRecords }
        let every = configuration.snapshotEveryRecords
        return recordsSinceSnapshot < every ? Int(clamping: every - recordsSinceSnapshot) : anyRecords
    }

    /// After the turn's records are appended: `checkpoint` (the outbox's, present when
    /// ``checkpointDemand(now:)`` found a snapshot due) covers exactly the journal through `lsn`
    /// (what ``append(_:)`` returned); it is written once that LSN is durable.
    ///
    /// With a replica there is no checkpoint: when a snapshot is due, the replica is asked for
    /// one at `lsn`, where the loop's state had the version and action sequence `position`.
    /// `recordsSchema` is the schema version of the records journaled after `lsn` until one says
    /// otherwise (a standby's may be older than this build's); `nil`: this build's.
    func snapshot(_ checkpoint: AuthorityCheckpoint<R>?, coveringThrough lsn: UInt64, at position: (version: UInt64, actionSeq: UInt64)? = nil,
                  recordsSchema: UInt32? = nil, now: UInt64) {
        guard inProgress == nil, awaitingDurable == nil, lsn > coveredLSN, failure == nil else { return }
        if let replica {
            guard let position, recordsUntilDue(now: now) == 0 else { return }
            replica.snapshot(at: .init(lsn: lsn, version: position.version, actionSeq: position.actionSeq))
            awaitingDurable = (nil, lsn, now)
        } else {
            guard let checkpoint else { return }
            if mayStartReplica, let setup = replicaSetup {
                seed = (lsn, recordsSchema ?? setup.configuration.schema.version, [], SnapshotReplica<R>.Seed())
            }
            awaitingDurable = (checkpoint, lsn, now)
        }
        coveredLSN = lsn
        startDurableCheckpoint(now: now)
    }

    /// Waits for the snapshot being written, if any, and collects it (compacting the journal).
    func finishSnapshotInProgress() {
        guard let started = inProgress else { return }
        guard let outcome = started.byReplica ? replica?.waitForOutcome() : writer?.waitForOutcome() else {
            // A replica that stopped first wrote nothing.
            if started.byReplica {
                inProgress = nil
                coveredLSN = writtenLSN
                if let reason = replicaFailing { retireReplica(because: reason) }
            }
            return
        }
        finish(outcome)
    }

    /// Whether, with no snapshot being written, the journal holds records no snapshot covers
    /// (and can still be trusted): then ``close(final:)`` wants the engine's last checkpoint.
    var wantsFinalSnapshot: Bool { failure == nil && recordsSinceSnapshot > 0 }

    /// The checkpoint for ``close(final:)``: `outbox`'s, taken from the engine after the loop's
    /// last turn with a checkpoint demanded at 0 records, or `nil` (and a warning) when the
    /// engine's state holds records the journal does not have: the outbox's own (the turn threw
    /// after the engine handled messages and before it took them), or `unappended` records of an
    /// outbox taken earlier and never appended (the turn threw in between). The final snapshot
    /// covers the journal's last LSN: one with those records would hold changes no journal has,
    /// never acknowledged, which a restart would keep and a standby never sees. Without it the
    /// journal still has everything acknowledged, and the next start replays it.
    func finalCheckpoint(from outbox: AuthorityEngine<R>.Outbox, unappended: Int = 0) -> AuthorityCheckpoint<R>? {
        let missing = outbox.records.count + unappended
        guard missing == 0 else {
            logger.warning("no final snapshot: the state holds \(missing) record(s) the journal does not have (the last turn stopped before appending them); the journal has everything acknowledged, and the next start replays it")
            return nil
        }
        return outbox.checkpoint
    }

    /// Waits for the snapshots being written or waiting, writes `final` (the checkpoint after the
    /// last turn, when ``wantsFinalSnapshot``), commits what is left and releases the data directory.
    func close(final: AuthorityCheckpoint<R>?) {
        syncer?.stop()
        syncer = nil
        if failure == nil, awaitingDurable != nil || final != nil { try? commitNow() }
        finishSnapshotInProgress()
        if awaitingDurable != nil {
            startDurableCheckpoint(now: MonotonicClock.milliseconds())
            finishSnapshotInProgress()
        }
        // The final snapshot is the loop's: a replica still applying records need not catch up.
        replica?.stop()
        replica = nil
        if let final, wantsFinalSnapshot, failure == nil {
            startSnapshot(final, lsn: journal.lastLSN, now: MonotonicClock.milliseconds())
            finishSnapshotInProgress()
        }
        writer?.stop()
        writer = nil
        do {
            try journal.close()
        } catch {
            logger.error("closing the journal failed: \(error)")
        }
        snapshotLock?.release()
    }

    deinit {
        // Normally stopped by close(); the store must not outlive the journal's directory lock.
        syncer?.stop()
        writer?.stop()
        replica?.stop()
    }

    /// Delay before the attempt after `failures` failed ones in a row: 1 s, doubling, at most 60 s.
    static func retryDelay(afterFailures failures: Int) -> UInt64 {
        min(1_000 << UInt64(min(max(failures - 1, 0), 6)), 60_000)
    }

    /// Runs `body` on the journal, reporting the bytes it wrote and the fsyncs it made (with
    /// their time) for the engine to count.
    private func measured<T>(_ body: () throws -> T) rethrows -> T {
        let before = journal.metrics
        defer {
            let after = journal.metrics
            report.journalBytes += after.bytesWritten - before.bytesWritten
            if after.fsyncs > before.fsyncs {
                report.journalFsyncs += after.fsyncs - before.fsyncs
                report.journalFsyncLatency.observe(after.fsyncTime - before.fsyncTime)
            }
        }
        return try body()
    }

    /// Starts writing the checkpoint that waited for its LSN, once that LSN is durable.
    private func startDurableCheckpoint(now: UInt64) {
        guard let waiting = awaitingDurable, waiting.lsn <= journal.committedLSN, inProgress == nil else { return }
        awaitingDurable = nil
        guard failure == nil else { return }
        if let checkpoint = waiting.checkpoint {
            startSnapshot(checkpoint, lsn: waiting.lsn, now: waiting.takenAt)
        } else if let replica {
            replica.durable(through: waiting.lsn)
            inProgress = (waiting.lsn, waiting.takenAt, byReplica: true)
            lastSnapshotAt = waiting.takenAt
        } else {
            coveredLSN = writtenLSN
        }
    }

    /// Encodes a checkpoint and lends its bytes to `write` (the encoder's buffer goes to the
    /// file as it is: a 64 MiB state was copied twice on its way there, out of the buffer and
    /// then behind the file's header).
    static func encode(_ checkpoint: AuthorityCheckpoint<R>, _ write: (UnsafeRawBufferPointer) throws -> Void) throws {
        let writer = MessagePackWriter()
        try MessagePackEncoder().encode(checkpoint, into: writer)
        try writer.withUnsafeBytes(write)
    }

    /// Hands the checkpoint and the LSN it covers exactly (durable in the journal) to the writer thread.
    private func startSnapshot(_ checkpoint: AuthorityCheckpoint<R>, lsn: UInt64, now: UInt64) {
        // A large one is kept (``SnapshotReplica/Seed``) to start a replica from.
        let kept = seed?.lsn == lsn ? seed?.checkpoint : nil
        let keepAbove = kept != nil ? configuration.replicaSnapshotsAbove : nil
        let request = SnapshotWriter.Request(lsn: lsn, version: checkpoint.sequencer.version) { write in
            try Self.encode(checkpoint) { bytes in
                try write(bytes)
                if let keepAbove, bytes.count >= keepAbove { kept?.keep(checkpoint) }
            }
        }
        let writer = self.writer ?? makeWriter()
        self.writer = writer
        guard writer.submit(request) else {
            coveredLSN = writtenLSN
            seed = nil
            return
        }
        inProgress = (lsn, now, byReplica: false)
        coveredLSN = lsn
        lastSnapshotAt = now
    }

    private func makeWriter() -> SnapshotWriter {
        SnapshotWriter(name: "snapshot-writer", makeDestination: destinationMaker)
    }

    /// Makes the store a writer or replica thread writes snapshots to (on that thread).
    private var destinationMaker: @Sendable () throws -> any SnapshotDestination {
        let (directory, snapshotDirectory, app) = (configuration.directory, configuration.snapshotDirectory, app)
        return snapshotDestination ?? {
            try SnapshotStore(directory: directory, app: app, snapshotDirectory: snapshotDirectory)
        }
    }

    /// Whether a snapshot replica runs: it then encodes the state for the feed and requests too.
    var replicaRuns: Bool { replica != nil && replicaFailing == nil }

    /// Has the replica encode the state at the journal's record `lsn` (the last appended), where
    /// the loop's state had `version` and `actionSeq`, for the feed or requests; `deliver` gets
    /// the outcome on the replica's thread. `false`: no replica runs (nothing will be delivered).
    func encodeState(lsn: UInt64, version: UInt64, actionSeq: UInt64, deliver: @escaping @Sendable (StateEncode.Done) -> Void) -> Bool {
        guard let replica, replicaFailing == nil else { return false }
        replica.encodeState(at: .init(lsn: lsn, version: version, actionSeq: actionSeq), deliver: deliver)
        return true
    }

    /// An encoding the replica was asked for came back failed: a replica that could not apply a
    /// record, or reached another version than the loop's at the mark, is retired at once, as a
    /// snapshot of it that failed so would retire it (the loop's checkpoints and its own
    /// encodings take over). One that is writing a snapshot is asked for nothing more and
    /// retired once that snapshot is collected: only it can say how the snapshot ended, and
    /// until then no other can start. One that stopped first is gone already; another error is
    /// not the replica's.
    func replicaEncodingFailed(_ error: any Error) {
        guard replica != nil, replicaFailing == nil, let failure = error as? SnapshotReplica<R>.Failure else { return }
        if case .stopped = failure { return }
        if inProgress?.byReplica == true {
            replicaFailing = "\(failure)"
        } else {
            retireReplica(because: "\(failure)")
        }
    }

    /// Whether a replica (or a checkpoint that may start one) follows every record journaled.
    private var followsRecords: Bool { replica != nil || seed != nil }

    /// Hands records just journaled to the replica, or to the checkpoint that may start one.
    private func follow(_ records: [JournalRecord]) {
        replica?.apply(records)
        seed?.records.append(contentsOf: records)
    }

    /// Whether a snapshot could start a replica now: the loop allows one, none runs, none failed.
    private var mayStartReplica: Bool {
        replicaSetup != nil && configuration.replicaSnapshotsAbove != nil && replica == nil && !replicaRetired
    }

    /// Whether a snapshot of `bytes` starts a replica.
    private func wantsReplica(forSnapshotOf bytes: Int) -> Bool {
        guard mayStartReplica, let threshold = configuration.replicaSnapshotsAbove else { return false }
        return bytes >= threshold
    }

    /// A replica's backlog may always reach this many bytes (more for a larger state).
    static var minimumReplicaBacklog: Int { 64 << 20 }

    /// Stops the replica for good: the loop's checkpoints write the snapshots again. The loop
    /// does not wait for its thread, which writes nothing more: it writes only at a mark, and
    /// none is pending when the durability retires it.
    private func retireReplica(because reason: String) {
        replica?.stop(waiting: false)
        replica = nil
        replicaRetired = true
        replicaFailing = nil
        logger.error("snapshot replica stopped (\(reason)); snapshots are taken from the loop's state again, and nothing is lost: the journal has every record")
    }

    /// On the loop thread: a written snapshot lets the journal be compacted; a failed one is retried later.
    private func finish(_ outcome: SnapshotWriter.Outcome) {
        guard let started = inProgress else { return }
        inProgress = nil
        let seed = self.seed
        self.seed = nil
        switch outcome.result {
        case .success(let result):
            if let seed, seed.lsn == outcome.lsn, let checkpoint = seed.checkpoint.take(), let setup = replicaSetup {
                replica = SnapshotReplica(setup: setup, checkpoint: checkpoint, lsn: seed.lsn, schema: seed.schema, records: seed.records,
                                          makeDestination: destinationMaker)
                logger.info("snapshots are written from a replica of the state from now on: the one at journal record \(outcome.lsn) has \(outcome.bytes) bytes (--snapshot-replica-above \(configuration.replicaSnapshotsAbove ?? 0))")
            }
            writtenLSN = max(writtenLSN, outcome.lsn)
            failedAttempts = 0
            retryAt = nil
            report.snapshotsWritten += 1
            report.snapshotBytesWritten += UInt64(outcome.bytes)
            report.lastSnapshotBytes = UInt64(outcome.bytes)
            lastSnapshotBytes = outcome.bytes
            report.snapshotWriteDuration.observe(outcome.elapsed)
            do {
                // With a disk thread (group commit) the files are deleted there, off the loop.
                let removed: [String]
                if let syncer {
                    removed = try journal.detachSegments(through: result.compactableThrough)
                    syncer.remove(removed, in: journal.journalDirectory)
                } else {
                    removed = try journal.compact(through: result.compactableThrough)
                }
                logger.debug("snapshot at journal record \(outcome.lsn), version \(outcome.version), written in \(outcome.elapsed) off the loop; \(removed.count) segment(s) compacted")
            } catch {
                logger.error("compacting the journal after the snapshot at record \(outcome.lsn) failed (nothing lost; the segments stay): \(error)")
            }
        case .failure(let error):
            if let error = error as? SnapshotReplica<R>.Failure { retireReplica(because: "\(error)") }
            failed(error, lsn: outcome.lsn, startedAt: started.startedAt)
        }
        if let reason = replicaFailing { retireReplica(because: reason) }
    }

    private func failed(_ error: any Error, lsn: UInt64, startedAt: UInt64) {
        failedAttempts += 1
        // The records it would have covered wait for the next one.
        coveredLSN = writtenLSN
        let delay = Self.retryDelay(afterFailures: failedAttempts)
        retryAt = startedAt + delay
        logger.error("writing the snapshot at journal record \(lsn) failed (attempt \(failedAttempts); the journal still has everything; next attempt in \(delay) ms): \(error)")
    }
}
