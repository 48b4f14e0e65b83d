import MessagePack
import ReactorCore
import ReactorLog
import ReactorStorage

/// The authority's journal and snapshots, and the rules for using them.
///
/// - Every batch's records are appended and committed before its acks leave (`batch`), or each
///   action's record before its own ack (`always`); `none` commits without fsync.
/// - A snapshot (the engine's checkpoint) is written every `snapshotEveryRecords` records or
///   `snapshotInterval`, and the journal is compacted up to what the older kept snapshot covers.
/// - Recovery loads the newest valid snapshot and replays the journal after it.
final class AuthorityDurability<R: Reactor> {
    private let journal: Journal
    private let snapshots: SnapshotStore
    private let configuration: PersistenceConfiguration
    private let app: String
    private let logger: Logger
    private let encoder = MessagePackEncoder()
    private let decoder = MessagePackDecoder()
    private var recordsSinceSnapshot: UInt64 = 0
    private var lastSnapshotAt = MonotonicClock.milliseconds()
    /// Set when the journal failed: the node must not ack anything any more.
    private(set) var failure: (any Error)?

    /// Whether every action's record is committed before its own ack.
    var flushesEachAction: Bool { configuration.fsync == .always }

    init(configuration: PersistenceConfiguration, app: String, logger: Logger) throws {
        self.configuration = configuration
        self.app = app
        self.logger = logger
        journal = try Journal(directory: configuration.directory, app: app, policy: configuration.fsync, repair: configuration.repair)
        snapshots = try SnapshotStore(directory: configuration.directory, app: app)
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
                let checkpoint = try decoder.decode(AuthorityCheckpoint<R>.self, from: snapshot.payload)
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
            try engine.replay(try decoder.decode(AuthorityRecord.self, from: record.payload))
            replayed += 1
        }
        recordsSinceSnapshot = UInt64(replayed)
        let state = engine.sequencer
        logger.info("recovered version \(state.version), action \(state.actionSeq), \(state.openJobCount) open job(s) (\(replayed) record(s) replayed)")
    }

    /// Appends and commits a batch's records. On failure the node must stop acking.
    func append(_ records: [AuthorityRecord], engine: AuthorityEngine<R>) throws {
        do {
            for record in records { try journal.append(try encoder.encode(record)) }
            try journal.commit()
        } catch {
            failure = error
            throw error
        }
        recordsSinceSnapshot += UInt64(records.count)
        engine.metrics[.journalRecords] += UInt64(records.count)
        engine.metrics[.journalCommits] += 1
    }

    /// Writes a snapshot when enough records or time have passed.
    func snapshotIfDue(engine: AuthorityEngine<R>, now: UInt64) {
        guard recordsSinceSnapshot > 0, failure == nil else { return }
        let dueByCount = recordsSinceSnapshot >= configuration.snapshotEveryRecords
        let dueByTime = now >= lastSnapshotAt + configuration.snapshotInterval.wholeMilliseconds
        guard dueByCount || dueByTime else { return }
        writeSnapshot(engine: engine, now: now)
    }

    /// Commits what is left, writes a final snapshot and releases the data directory.
    func close(engine: AuthorityEngine<R>) {
        if failure == nil, recordsSinceSnapshot > 0 { writeSnapshot(engine: engine, now: MonotonicClock.milliseconds()) }
        do {
            try journal.close()
        } catch {
            logger.error("closing the journal failed: \(error)")
        }
    }

    private func writeSnapshot(engine: AuthorityEngine<R>, now: UInt64) {
        do {
            try journal.commit()
            let payload = try encoder.encode(engine.checkpoint())
            let result = try snapshots.write(payload, coveringThrough: journal.committedLSN)
            let removed = try journal.compact(through: result.compactableThrough)
            engine.metrics[.snapshotsWritten] += 1
            recordsSinceSnapshot = 0
            lastSnapshotAt = now
            logger.debug("snapshot at journal record \(journal.committedLSN), version \(engine.sequencer.version); \(removed.count) segment(s) compacted")
        } catch {
            logger.error("writing a snapshot failed (the journal still has everything): \(error)")
        }
    }
}
