import MessagePack
import ReactorBus
import ReactorCore
import ReactorStorage
import Synchronization

/// The inspector's read-only view of a data directory (`inspect --data`): states at any version
/// the directory can rebuild (time travel: replayed from the nearest snapshot through the
/// authority's own engine, like `replay --to-version`), and, without a feed, the records appended
/// since the last look, handed to the history like feed mutations, with the actions themselves and
/// the jobs' ends. Takes no lock and writes nothing.
final class InspectorJournal<R: Reactor>: Sendable {
    let directory: String
    private let app: String
    private let snapshotDirectory: String?
    private let schema: AppSchema
    private let reactor: R
    /// The last journal record handed to the history, and the state version after it.
    private let followed = Mutex<(lsn: UInt64, version: UInt64?)>((0, nil))

    init(directory: String, app: String, snapshotDirectory: String?, schema: AppSchema, reactor: R) {
        self.directory = directory
        self.app = app
        self.snapshotDirectory = snapshotDirectory
        self.schema = schema
        self.reactor = reactor
    }

    private var history: JournalHistory<R> {
        JournalHistory(directory: DataDirectoryReader(directory: directory, app: app, snapshotDirectory: snapshotDirectory), reactor: reactor, schema: schema)
    }

    /// The state at exactly `version`, replayed from the newest snapshot at or before it.
    ///
    /// - Throws: ``JournalHistory/Failure`` for a version the directory cannot rebuild, and what
    ///   reading it throws (damage, an unknown schema).
    func state(at version: UInt64) throws -> JournalHistory<R>.Rebuilt {
        try history.state(at: version)
    }

    /// The mutations at `versions` (ascending), replayed from the newest snapshot before the
    /// first: for an action whose mutations left the inspector's window.
    func mutations(at versions: [UInt64]) throws -> [InspectorHistory<R>.Recorded] {
        guard let first = versions.first, let last = versions.last else { return [] }
        let wanted = Set(versions)
        var found: [InspectorHistory<R>.Recorded] = []
        try history.replay(from: first > 0 ? first - 1 : 0, visit: { entry, _ in
            for applied in entry.applied where wanted.contains(applied.version) {
                found.append(InspectorHistory<R>.Recorded(version: applied.version, actionSeq: applied.actionSeq, origin: applied.origin,
                                                          mutation: applied.mutation, seenAt: 0))
            }
            return entry.version < last
        })
        return found
    }

    /// Hands the records appended since the last call to `inspector`: with `mutations`, every
    /// applied mutation (the journal is then the inspector's source, as the feed would be; the
    /// first call starts from the oldest state the directory can rebuild); always, the actions
    /// themselves and the jobs' ends, which the feed does not carry.
    func follow(into inspector: InspectorHistory<R>, mutations: Bool) throws {
        let (after, from) = followed.withLock { $0 }
        var last = (lsn: after, version: from)
        try history.replay(from: from) { state, version, actionSeq in
            if mutations, version > inspector.current?.version ?? 0 || inspector.current == nil {
                _ = inspector.install(version: version, actionSeq: actionSeq, state: state)
            }
            return true
        } visit: { entry, _ in
            guard entry.lsn > after else { return true }
            last = (entry.lsn, entry.version)
            let now = InspectorHistory<R>.now()
            if case .accepted(_, _, let action) = entry.record, let value = try? MessagePackValue(unpacking: action) {
                inspector.noteAction(entry.actionSeq, action: value)
            }
            if mutations {
                for applied in entry.applied {
                    _ = inspector.receive(InspectorHistory<R>.Recorded(version: applied.version, actionSeq: applied.actionSeq, origin: applied.origin,
                                                                       mutation: applied.mutation, seenAt: now))
                }
            }
            switch entry.record {
            case .completed(let job, _): inspector.noteJob(job, outcome: "done")
            case .failed(let job, _): inspector.noteJob(job, outcome: "failed")
            default: break
            }
            return true
        }
        followed.withLock { $0 = last }
    }
}
