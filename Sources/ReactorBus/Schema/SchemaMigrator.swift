import MessagePack
import ReactorCore
import ReactorStorage

/// Reads what an older release of the app stored, for an authority of the current schema: the
/// newest snapshot's checkpoint and the journal records after it, each converted through the
/// app's ``SchemaMigration`` steps. Records and snapshots of the current version pass unchanged.
struct SchemaMigrator<R: Reactor> {
    let schema: AppSchema
    let app: String
    private let encoder = MessagePackEncoder()
    private let decoder = MessagePackDecoder()

    init(schema: AppSchema, app: String) {
        self.schema = schema
        self.app = app
    }

    /// The checkpoint a snapshot `file` holds, as this build's types, and the schema version it
    /// was written at.
    ///
    /// - Throws: ``PersistenceError/appMismatch(expected:found:file:)``, ``SchemaError``, or
    ///   ``RecoveryError`` when it does not decode with this build's types.
    func load(_ payload: [UInt8], file: String) throws -> (checkpoint: AuthorityCheckpoint<R>, stored: UInt32) {
        do {
            let header = try decoder.decode(CheckpointHeader.self, from: payload)
            guard header.app == app else {
                throw PersistenceError.appMismatch(expected: app, found: header.app, file: file)
            }
            let stored = header.schema ?? 1
            return (try checkpoint(payload, stored: stored, source: "snapshot \(file)"), stored)
        } catch let error as DecodingError {
            throw RecoveryError.snapshot(file, error, type: R.State.self)
        }
    }

    /// The checkpoint in `payload`, written at schema `stored`, as this build's types.
    func checkpoint(_ payload: [UInt8], stored: UInt32, source: String) throws -> AuthorityCheckpoint<R> {
        let steps = try schema.path(from: stored, app: app, source: source)
        guard !steps.isEmpty else { return try decoder.decode(AuthorityCheckpoint<R>.self, from: payload) }
        var values = try decoder.decode(AuthorityCheckpoint<StoredValues>.self, from: payload)
        for step in steps {
            values.sequencer = try migrating(step, source: source) {
                try values.sequencer.converted(to: StoredValues.self, state: step.state, effect: step.effect, mutation: step.mutation)
            }
        }
        values.schema = schema.version
        return try migrating(steps[steps.count - 1], source: source) {
            try decoder.decode(AuthorityCheckpoint<R>.self, from: try encoder.encode(values))
        }
    }

    /// The bytes of an action (`isAction`) or mutation stored at schema `stored`, as this build's
    /// types encode them; the same bytes when `stored` is current.
    func payload(_ bytes: [UInt8], isAction: Bool, stored: UInt32, source: String) throws -> [UInt8] {
        let steps = try schema.path(from: stored, app: app, source: source)
        guard !steps.isEmpty else { return bytes }
        var value = try MessagePackValue(unpacking: bytes)
        for step in steps {
            value = try migrating(step, source: source) { try isAction ? step.action(value) : step.mutation(value) }
        }
        return value.pack()
    }

    private func migrating<T>(_ step: SchemaMigration, source: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SchemaError {
            throw error
        } catch {
            throw SchemaError.migrationFailed(app: app, from: step.from, source: source, detail: "\(error)")
        }
    }
}
