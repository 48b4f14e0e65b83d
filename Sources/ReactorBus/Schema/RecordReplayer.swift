import MessagePack
import ReactorCore
import ReactorStorage

/// Replays journal records into an engine as recovery does, migrating what an older schema
/// version of the app stored: the authority's recovery and the journal tools share it.
///
/// Records after a snapshot are of the snapshot's schema version until a `schema` marker says
/// otherwise; those of another version than the app's are converted through its migrations.
struct RecordReplayer<R: Reactor> {
    let schema: AppSchema
    let app: String
    private let migrator: SchemaMigrator<R>
    private let decoder = MessagePackDecoder()
    /// The schema version of the records being read.
    private(set) var stored: UInt32
    /// The client of the last `accepted` record read, whose `String` the next one reuses.
    private var lastClient: String?
    /// Records migrated so far, and the versions they came from.
    private(set) var migrated: (records: Int, from: Set<UInt32>) = (0, [])

    /// A replayer for records following data of schema version `stored` (a snapshot's, or 1).
    init(schema: AppSchema, app: String, stored: UInt32) {
        self.schema = schema
        self.app = app
        self.stored = stored
        migrator = SchemaMigrator(schema: schema, app: app)
    }

    /// Decodes `record`, migrates it if needed and replays it into `engine`, keeping nothing of
    /// what it applied (recovery, standbys).
    ///
    /// - Throws: ``RecoveryError`` for a record that does not decode, ``SchemaError``.
    mutating func replay(_ record: JournalRecord, into engine: AuthorityEngine<R>) throws {
        // No closure around the body (as `replayCollecting` has): in this code, compiled for
        // any reactor, a closure over the replayer cost a standby type lookups per record.
        do {
            let prepared = try prepare(record)
            if prepared.replays { try engine.replayQuietly(prepared.decoded, migrated: prepared.migrated) }
        } catch let error as DecodingError {
            throw Self.named(error, record)
        }
    }

    /// Replays `records` in order as ``replay(_:into:)`` does, stopping at the first that fails.
    mutating func replay(_ records: [JournalRecord], into engine: AuthorityEngine<R>) throws {
        for record in records { try replay(record, into: engine) }
    }

    /// As ``replay(_:into:)``, and returns the decoded record and the mutations it applied (for
    /// tools that show or rebuild each version).
    mutating func replayCollecting(_ record: JournalRecord, into engine: AuthorityEngine<R>) throws -> (AuthorityRecord, [AppliedMutation<R.Mutation>]) {
        do {
            let prepared = try prepare(record)
            guard prepared.replays else { return (prepared.decoded, []) }
            return (prepared.decoded, try engine.replay(prepared.decoded, migrated: prepared.migrated, collectingApplied: true))
        } catch let error as DecodingError {
            throw Self.named(error, record)
        }
    }

    /// The decoded record, its payload converted to the app's schema version when it was stored
    /// at another, and whether it replays (a `schema` marker only changes what follows).
    private mutating func prepare(_ record: JournalRecord) throws -> (decoded: AuthorityRecord, migrated: [UInt8]?, replays: Bool) {
        let decoded = try AuthorityRecord(journalBytes: record.payload, decoder: decoder, client: lastClient)
        if case .accepted(let client, _, _) = decoded { lastClient = client }
        // Made only where a migration needs it: formatting it per record was a visible part of
        // a standby's replay.
        var source: String { "journal record \(record.lsn)" }
        switch decoded {
        case .schema(let version):
            _ = try schema.path(from: version, app: app, source: source)
            stored = version
            return (decoded, nil, false)
        case .accepted(_, _, let bytes) where stored != schema.version, .subscriptionEvent(_, _, let bytes) where stored != schema.version:
            return (decoded, try migrate(bytes, isAction: true, source: source), true)
        case .emitted(_, _, let bytes) where stored != schema.version:
            return (decoded, try migrate(bytes, isAction: false, source: source), true)
        default:
            return (decoded, nil, true)
        }
    }

    /// A `DecodingError` of the action or mutation inside `record` (whose own bytes are not at
    /// hand where it was thrown) as a ``RecoveryError`` naming the record.
    private static func named(_ error: DecodingError, _ record: JournalRecord) -> RecoveryError {
        RecoveryError.record(record.lsn, error, type: R.self)
    }

    private mutating func migrate(_ bytes: [UInt8], isAction: Bool, source: String) throws -> [UInt8] {
        migrated.records += 1
        migrated.from.insert(stored)
        return try migrator.payload(bytes, isAction: isAction, stored: stored, source: source)
    }
}
