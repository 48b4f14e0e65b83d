import MessagePack
import ReactorCore
import ReactorLog
import ReactorStorage

/// What a data directory holds, replayed read-only through the authority's own engine and the
/// app's types: for `journal dump` and `replay` (time travel), beside a running authority or on a
/// copy. Nothing is locked or changed (``DataDirectoryReader``).
///
/// History starts at the oldest point the directory can rebuild: the empty state when the
/// journal still starts at its first record, else a snapshot whose journal tail is still there.
package struct JournalHistory<R: Reactor> {
    /// One journal record and what replaying it did.
    package struct Entry {
        package var lsn: UInt64
        package var record: AuthorityRecord
        /// The mutations it applied, in order (versions included).
        package var applied: [AppliedMutation<R.Mutation>]
        /// The state's version and last action's sequence number after it.
        package var version: UInt64
        package var actionSeq: UInt64
    }

    /// Where a replay started: a snapshot (its file and LSN) or the empty state.
    package struct Start: Equatable {
        package var lsn: UInt64
        package var version: UInt64
        package var snapshot: String?
    }

    /// A state rebuilt at a version.
    package struct Rebuilt {
        package var state: R.State
        package var version: UInt64
        package var actionSeq: UInt64
        package var start: Start
    }

    /// Why a history cannot answer.
    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// No start point at or before the version: older records were compacted away.
        case versionTooOld(requested: UInt64, oldest: UInt64)
        /// The journal ends before the version.
        case versionTooNew(requested: UInt64, last: UInt64)
        /// Neither a snapshot nor a journal from its first record.
        case nothingToReplay(directory: String)

        package var description: String {
            switch self {
            case .versionTooOld(let requested, let oldest):
                "version \(requested) is older than the oldest state this data directory can rebuild (version \(oldest)): older records were compacted into snapshots"
            case .versionTooNew(let requested, let last):
                "version \(requested) is past the journal's end (version \(last))"
            case .nothingToReplay(let directory):
                "\(directory) holds no snapshot and no journal from its first record: nothing to replay"
            }
        }
    }

    private let directory: DataDirectoryReader
    private let reactor: R
    private let schema: AppSchema

    /// The history of `directory` for `reactor`'s app, read through `schema`'s migrations.
    package init(directory: DataDirectoryReader, reactor: R, schema: AppSchema) {
        self.directory = directory
        self.reactor = reactor
        self.schema = schema
    }

    /// Replays every record after the start point for `version` (the newest at or before it;
    /// `nil`: the oldest): `atStart` sees the start point's state (its version and action
    /// sequence number), then `visit` each record with the state after it, each until it says
    /// stop (`false`). Returns where it started.
    ///
    /// - Throws: ``Failure``, ``RecoveryError``, ``SchemaError``, ``PersistenceError`` (damage
    ///   stops the replay at the damaged record, with the file and offset).
    @discardableResult
    package func replay(from version: UInt64?, atStart: (R.State, _ version: UInt64, _ actionSeq: UInt64) throws -> Bool = { _, _, _ in true },
                        visit: (Entry, R.State) throws -> Bool) throws -> Start {
        let journal = try directory.journal()
        let (start, checkpoint) = try startPoint(for: version, journalFirstLSN: journal.report.firstLSN, journalLastLSN: journal.report.lastLSN)
        var configuration = AuthorityConfiguration(appName: directory.app, actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.schema = schema
        let engine = AuthorityEngine(reactor: reactor, configuration: configuration, logger: Logger(label: "history", sink: .discard), journaling: false)
        if let checkpoint { engine.restore(checkpoint.value) }
        guard try atStart(engine.sequencer.state, engine.sequencer.version, engine.sequencer.actionSeq) else { return start }
        var replayer = RecordReplayer<R>(schema: schema, app: directory.app, stored: checkpoint?.stored ?? 1)
        var records = journal.records(after: start.lsn)
        while let record = try records.next() {
            let (decoded, applied) = try replayer.replayCollecting(record, into: engine)
            let entry = Entry(lsn: record.lsn, record: decoded, applied: applied, version: engine.sequencer.version, actionSeq: engine.sequencer.actionSeq)
            guard try visit(entry, engine.sequencer.state) else { break }
        }
        return start
    }

    /// The state at exactly `version`: replayed from the newest start point before it; inside a
    /// record that applied several mutations, the state before it reduced by those up to `version`.
    ///
    /// - Throws: ``Failure`` and what ``replay(from:atStart:visit:)`` throws.
    package func state(at version: UInt64) throws -> Rebuilt {
        var result: (state: R.State, actionSeq: UInt64)?
        var previous: (state: R.State, version: UInt64, actionSeq: UInt64)?
        let start = try replay(from: version) { state, reached, actionSeq in
            previous = (state, reached, actionSeq)
            if reached == version { result = (state, actionSeq) }
            return result == nil
        } visit: { entry, state in
            if let before = previous, entry.version >= version {
                var rebuilt = before.state
                for mutation in entry.applied where mutation.version <= version { reactor.reduce(state: &rebuilt, mutation: mutation.mutation) }
                result = (rebuilt, entry.applied.last { $0.version <= version }?.actionSeq ?? before.actionSeq)
                return false
            }
            previous = (state, entry.version, entry.actionSeq)
            return true
        }
        guard let result else { throw Failure.versionTooNew(requested: version, last: previous?.version ?? 0) }
        return Rebuilt(state: result.state, version: version, actionSeq: result.actionSeq, start: start)
    }

    /// The start point for `version` and its decoded checkpoint (none for the empty state).
    private func startPoint(for version: UInt64?, journalFirstLSN: UInt64, journalLastLSN: UInt64) throws
        -> (Start, (value: AuthorityCheckpoint<R>, stored: UInt32)?) {
        let migrator = SchemaMigrator<R>(schema: schema, app: directory.app)
        var candidates: [(start: Start, checkpoint: (value: AuthorityCheckpoint<R>, stored: UInt32)?)] = []
        if journalFirstLSN <= 1 { candidates.append((Start(lsn: 0, version: 0, snapshot: nil), nil)) }
        for snapshot in try directory.snapshots() {
            guard let payload = snapshot.payload, snapshot.lsn + 1 >= journalFirstLSN || snapshot.lsn >= journalLastLSN else { continue }
            let (checkpoint, stored) = try migrator.load(payload, file: snapshot.file)
            candidates.append((Start(lsn: snapshot.lsn, version: checkpoint.sequencer.version, snapshot: snapshot.file), (checkpoint, stored)))
        }
        guard let oldest = candidates.min(by: { $0.start.version < $1.start.version }) else {
            throw Failure.nothingToReplay(directory: directory.directory)
        }
        guard let version else { return oldest }
        guard let best = candidates.filter({ $0.start.version <= version }).max(by: { $0.start.version < $1.start.version }) else {
            throw Failure.versionTooOld(requested: version, oldest: oldest.start.version)
        }
        return best
    }
}
