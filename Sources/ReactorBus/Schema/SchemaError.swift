/// Why an authority will not start on a data directory of another schema version (or why a peer
/// was refused): the message names both versions and what to do.
public enum SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data was written by a newer build than this one.
    case newerData(app: String, stored: UInt32, current: UInt32, source: String)
    /// The data is older and no migration covers step `missing` → `missing + 1`.
    case noMigration(app: String, stored: UInt32, current: UInt32, missing: UInt32, source: String)
    /// A migration threw, or its result did not decode with this build's types.
    case migrationFailed(app: String, from: UInt32, source: String, detail: String)

    public var description: String {
        switch self {
        case .newerData(let app, let stored, let current, let source):
            "\(source) holds \(app) data of schema version \(stored), but this build reads schema version \(current): "
                + "run a build of schema \(stored) or later (going back to an older schema is not supported); nothing was changed"
        case .noMigration(let app, let stored, let current, let missing, let source):
            "\(source) holds \(app) data of schema version \(stored), and this build reads schema version \(current) "
                + "but has no migration from version \(missing): add SchemaMigration(from: \(missing), state: ...) to the app's "
                + "AppSchema (docs/GUIDE.md, \"When the state's shape changes\"), or run a build of schema \(stored); nothing was changed"
        case .migrationFailed(let app, let from, let source, let detail):
            "migrating \(source) of \(app) from schema version \(from) failed: \(detail); nothing was changed"
        }
    }
}
