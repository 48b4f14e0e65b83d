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
    /// Records migrated so far, and the versions they came from.
    private(set) var migrated: (records: Int, from: Set<UInt32>) = (0, [])

    /// A replayer for records following data of schema version `stored` (a snapshot's, or 1).
    init(schema: AppSchema, app: String, stored: UInt32) {
        self.schema = schema
        self.app = app
        self.stored = stored
        migrator = SchemaMigrator(schema: schema, app: app)
    }

    /// Decodes `record`, migrates it if needed and replays it into `engine`; returns the record
    /// and, with `collectingApplied`, the mutations it applied (else none).
    ///
    /// - Throws: ``RecoveryError`` for a record that does not decode, ``SchemaError``.
    @discardableResult
    mutating func replay(_ record: JournalRecord, into engine: AuthorityEngine<R>, collectingApplied: Bool = false) throws -> (AuthorityRecord, [AppliedMutation<R.Mutation>]) {
        do {
            let decoded = try AuthorityRecord(journalBytes: record.payload, decoder: decoder)
            let source = "journal record \(record.lsn)"
            switch decoded {
            case .schema(let version):
                _ = try schema.path(from: version, app: app, source: source)
                stored = version
                return (decoded, [])
            case .accepted(_, _, let bytes) where stored != schema.version:
                return (decoded, try engine.replay(decoded, migrated: try migrate(bytes, isAction: true, source: source), collectingApplied: collectingApplied))
            case .subscriptionEvent(_, _, let bytes) where stored != schema.version:
                return (decoded, try engine.replay(decoded, migrated: try migrate(bytes, isAction: true, source: source), collectingApplied: collectingApplied))
            case .emitted(_, _, let bytes) where stored != schema.version:
                return (decoded, try engine.replay(decoded, migrated: try migrate(bytes, isAction: false, source: source), collectingApplied: collectingApplied))
            default:
                return (decoded, try engine.replay(decoded, collectingApplied: collectingApplied))
            }
        } catch let error as DecodingError {
            // The action or mutation inside the record: its own bytes are not at hand here.
            throw RecoveryError.record(record.lsn, error, type: R.self)
        }
    }

    private mutating func migrate(_ bytes: [UInt8], isAction: Bool, source: String) throws -> [UInt8] {
        migrated.records += 1
        migrated.from.insert(stored)
        return try migrator.payload(bytes, isAction: isAction, stored: stored, source: source)
    }
}
