import MessagePack
import ReactorCore
import ReactorLog
import ReactorStorage

/// The authority's journal and snapshots, and the rules for using them.
///
/// It never reads the engine during a turn: ``checkpointDemand(now:)`` says, before the turn's
/// outbox is taken, when that outbox must carry a checkpoint; the loop hands it the outbox's
/// records and checkpoint; what it did (commits, snapshots written) waits in ``takeReport()``
/// for the loop to give the engine, which alone counts it.
///
/// - Every batch's records are appended and committed before its acks leave (`batch`), or each
///   action's record before its own ack (`always`); `none` commits without fsync.
/// - A snapshot (the engine's checkpoint) is written every `snapshotEveryRecords` records or
///   `snapshotInterval`, and the journal is compacted up to what the older kept snapshot covers.
///   The loop only takes the checkpoint (a copy-on-write copy) and the LSN it covers exactly; a
///   ``SnapshotWriter`` encodes, writes and fsyncs it on its own thread, and the loop compacts
///   the journal when it collects the outcome on a later turn. One snapshot at a time: one that
///   falls due while another is being written waits for it.
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
    private let encoder = MessagePackEncoder()
    private let decoder = MessagePackDecoder()
    private var recordsSinceSnapshot: UInt64 = 0
    private var lastSnapshotAt = MonotonicClock.milliseconds()
    /// Started at the first snapshot, stopped by `close`.
    private var writer: SnapshotWriter?
    /// The snapshot being written: its LSN, the records it covers beyond the previous one, and
    /// when it started.
    private var inProgress: (lsn: UInt64, records: UInt64, startedAt: UInt64)?
    /// Failed attempts in a row, and when the next may start.
    private var failedAttempts = 0
    private var retryAt: UInt64?
    /// Where the writer thread puts snapshots; `nil` for a ``SnapshotStore`` on the data
    /// directory. Tests set it (before the first snapshot) to a slow or failing destination.
    var snapshotDestination: (@Sendable () throws -> any SnapshotDestination)?
    /// Set when the journal failed: the node must not ack anything any more.
    private(set) var failure: (any Error)?
    /// Commits and snapshots written since the last ``takeReport()``.
    private var report = AuthorityLoopReport()

    /// Whether every action's record is committed before its own ack.
    var flushesEachAction: Bool { configuration.fsync == .always }

    init(configuration: PersistenceConfiguration, app: String, logger: Logger) throws {
        self.configuration = configuration
        self.app = app
        self.logger = logger
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

    /// Loads the newest snapshot and replays the journal after it into `engine`.
    func recover(into engine: AuthorityEngine<R>) throws {
        var after: UInt64 = 0
        do {
            if let snapshot = try snapshots.loadNewest() {
                for rejection in snapshot.rejected { logger.warning("snapshot rejected: \(rejection)") }
                let checkpoint: AuthorityCheckpoint<R>
                do {
                    checkpoint = try decoder.decode(AuthorityCheckpoint<R>.self, from: snapshot.payload)
                } catch let error as DecodingError {
                    throw RecoveryError.snapshot(snapshot.file, error, payload: snapshot.payload, type: R.State.self)
                }
                guard checkpoint.app == app else {
                    throw PersistenceError.appMismatch(expected: app, found: checkpoint.app, file: snapshot.file)
                }
                engine.restore(checkpoint)
                after = snapshot.lsn
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
        var replayed = 0
        while let record = try reader.next() {
            do {
                try engine.replay(try decoder.decode(AuthorityRecord.self, from: record.payload))
            } catch let error as DecodingError {
                // The action or mutation inside the record: its own bytes are not at hand here.
                throw RecoveryError.record(record.lsn, error, payload: [], type: R.self)
            }
            replayed += 1
        }
        recordsSinceSnapshot = UInt64(replayed)
        let state = engine.currentMetrics()
        logger.info("recovered version \(state.version), action \(state.actionSeq), \(state.openJobs) open job(s) (\(replayed) record(s) replayed)")
    }

    /// What was committed and written since the last call, for the engine to count.
    func takeReport() -> AuthorityLoopReport {
        defer { report = AuthorityLoopReport() }
        return report
    }

    /// Appends and commits a batch's records. On failure the node must stop acking.
    func append(_ records: [AuthorityRecord]) throws {
        do {
            for record in records { try journal.append(try encoder.encode(record)) }
            try commit()
        } catch {
            failure = error
            throw error
        }
        recordsSinceSnapshot += UInt64(records.count)
        report.journalRecords += UInt64(records.count)
        report.journalCommits += 1
    }

    /// Before a turn's outbox is taken: collects a finished snapshot (compacting the journal),
    /// then says how many of the turn's records make a snapshot due (0: due now), so the outbox
    /// carries the checkpoint; `nil` while one is being written, the journal failed, or a failed
    /// one's retry is not due. Due when enough records or time have passed, or at a retry.
    func checkpointDemand(now: UInt64) -> Int? {
        if inProgress != nil, let outcome = writer?.takeOutcome() { finish(outcome) }
        guard inProgress == nil, failure == nil else { return nil }
        // Whatever else is due, a snapshot needs at least one record since the last one.
        let anyRecords = recordsSinceSnapshot > 0 ? 0 : 1
        if let retryAt {
            return now >= retryAt ? anyRecords : nil
        }
        if now >= lastSnapshotAt + configuration.snapshotInterval.wholeMilliseconds { return anyRecords }
        let every = configuration.snapshotEveryRecords
        return recordsSinceSnapshot < every ? Int(clamping: every - recordsSinceSnapshot) : anyRecords
    }

    /// After the turn's records are appended: starts writing `checkpoint` (the outbox's, present
    /// when ``checkpointDemand(now:)`` found a snapshot due), which covers exactly the journal.
    func snapshot(_ checkpoint: AuthorityCheckpoint<R>?, now: UInt64) {
        guard let checkpoint, inProgress == nil, recordsSinceSnapshot > 0, failure == nil else { return }
        startSnapshot(checkpoint, now: now)
    }

    /// Waits for the snapshot being written, if any, and collects it (compacting the journal).
    func finishSnapshotInProgress() {
        guard inProgress != nil, let outcome = writer?.waitForOutcome() else { return }
        finish(outcome)
    }

    /// Whether, with no snapshot being written, the journal holds records no snapshot covers
    /// (and can still be trusted): then ``close(final:)`` wants the engine's last checkpoint.
    var wantsFinalSnapshot: Bool { failure == nil && recordsSinceSnapshot > 0 }

    /// Waits for the snapshot being written, writes `final` (the checkpoint after the last
    /// turn, when ``wantsFinalSnapshot``), commits what is left and releases the data directory.
    func close(final: AuthorityCheckpoint<R>?) {
        finishSnapshotInProgress()
        if let final, wantsFinalSnapshot {
            startSnapshot(final, now: MonotonicClock.milliseconds())
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
        writer?.stop()
    }

    /// Delay before the attempt after `failures` failed ones in a row: 1 s, doubling, at most 60 s.
    static func retryDelay(afterFailures failures: Int) -> UInt64 {
        min(1_000 << UInt64(min(max(failures - 1, 0), 6)), 60_000)
    }

    /// Commits the journal, reporting the bytes it wrote and the time it spent syncing them.
    private func commit() throws {
        let before = journal.metrics
        try journal.commit()
        let after = journal.metrics
        report.journalBytes += after.bytesWritten - before.bytesWritten
        if after.fsyncs > before.fsyncs {
            report.journalFsyncs += after.fsyncs - before.fsyncs
            report.journalFsyncLatency.observe(after.fsyncTime - before.fsyncTime)
        }
    }

    /// Commits the journal and hands the checkpoint and the LSN it covers to the writer thread.
    private func startSnapshot(_ checkpoint: AuthorityCheckpoint<R>, now: UInt64) {
        do {
            try commit()
        } catch {
            failed(error, lsn: journal.lastLSN, records: 0, startedAt: now)
            return
        }
        // The checkpoint was taken with the outbox whose records were appended just before:
        // it holds exactly the records through committedLSN.
        let lsn = journal.committedLSN
        let request = SnapshotWriter.Request(lsn: lsn, version: checkpoint.sequencer.version) { try MessagePackEncoder().encode(checkpoint) }
        let writer = self.writer ?? makeWriter()
        self.writer = writer
        guard writer.submit(request) else { return }
        inProgress = (lsn, recordsSinceSnapshot, now)
        recordsSinceSnapshot = 0
        lastSnapshotAt = now
    }

    private func makeWriter() -> SnapshotWriter {
        let (directory, snapshotDirectory, app) = (configuration.directory, configuration.snapshotDirectory, app)
        return SnapshotWriter(name: "snapshot-writer", makeDestination: snapshotDestination ?? {
            try SnapshotStore(directory: directory, app: app, snapshotDirectory: snapshotDirectory)
        })
    }

    /// On the loop thread: a written snapshot lets the journal be compacted; a failed one is retried later.
    private func finish(_ outcome: SnapshotWriter.Outcome) {
        guard let started = inProgress else { return }
        inProgress = nil
        switch outcome.result {
        case .success(let result):
            failedAttempts = 0
            retryAt = nil
            report.snapshotsWritten += 1
            report.snapshotBytesWritten += UInt64(outcome.bytes)
            report.lastSnapshotBytes = UInt64(outcome.bytes)
            report.snapshotWriteDuration.observe(outcome.elapsed)
            do {
                let removed = try journal.compact(through: result.compactableThrough)
                logger.debug("snapshot at journal record \(outcome.lsn), version \(outcome.version), written in \(outcome.elapsed) off the loop; \(removed.count) segment(s) compacted")
            } catch {
                logger.error("compacting the journal after the snapshot at record \(outcome.lsn) failed (nothing lost; the segments stay): \(error)")
            }
        case .failure(let error):
            failed(error, lsn: outcome.lsn, records: started.records, startedAt: started.startedAt)
        }
    }

    private func failed(_ error: any Error, lsn: UInt64, records: UInt64, startedAt: UInt64) {
        failedAttempts += 1
        recordsSinceSnapshot += records
        let delay = Self.retryDelay(afterFailures: failedAttempts)
        retryAt = startedAt + delay
        logger.error("writing the snapshot at journal record \(lsn) failed (attempt \(failedAttempts); the journal still has everything; next attempt in \(delay) ms): \(error)")
    }
}
