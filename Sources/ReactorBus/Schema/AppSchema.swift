import MessagePack

/// Which shape of an app's values a build speaks, and how to read what older builds stored.
///
/// An app starts at version 1 and bumps ``version`` when its `State`, `Action`, `Mutation` or
/// `Effect` changes in a way old bytes no longer decode (a field renamed or retyped, a case
/// removed). Changes that old bytes still decode need no new version: a new optional field, a
/// new field whose `init(from:)` uses `decodeIfPresent(...) ?? default`, a new enum case.
///
/// The authority stamps its version on its snapshots and journal, and on `pong`; workers send
/// theirs in `ready`. On start with data of an older version it runs the ``migrations`` from that
/// version up to ``version``; without them, or with data of a newer version, it refuses to start
/// with a message that names both versions. Peers of another version are refused at the
/// handshake unless one side lists the other's version in ``compatibleVersions``.
public struct AppSchema: Sendable {
    /// The version of the app's value shapes this build reads and writes (from 1).
    public var version: UInt32
    /// Versions of peers (workers, observers, clients) that may join although they differ: their
    /// messages decode with this build's types and this build's decode with theirs.
    public var compatibleVersions: Set<UInt32>
    /// Migrations by the version they start from; one for every step from the oldest version
    /// still found in data directories up to ``version``.
    public var migrations: [UInt32: SchemaMigration]

    /// Version `version` (default 1), compatible with `compatibleVersions`, reading older data
    /// through `migrations` (each from its ``SchemaMigration/from`` to the next version).
    public init(version: UInt32 = 1, compatibleVersions: Set<UInt32> = [], migrations: [SchemaMigration] = []) {
        self.version = version
        self.compatibleVersions = compatibleVersions
        self.migrations = Dictionary(migrations.map { ($0.from, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Whether a peer that speaks `other` may join this one.
    public func accepts(_ other: UInt32) -> Bool {
        other == version || compatibleVersions.contains(other)
    }

    /// Whether a client or observer of this schema may follow an authority that speaks
    /// `authority` and accepts `accepted` (from its `pong`): either side may declare the other
    /// compatible.
    public func agrees(withAuthority authority: UInt32, accepting accepted: [UInt32]) -> Bool {
        accepts(authority) || accepted.contains(version)
    }

    /// The one line a client or observer of this schema gives when an authority of `authority`
    /// does not agree (see ``agrees(withAuthority:accepting:)``).
    func disagreement(app: String, endpoint: String, authority: UInt32) -> String {
        "the authority at \(endpoint) runs \(app) schema version \(authority), this build speaks version \(version): "
            + "use a build of the same release, or list \(authority) in the app's AppSchema.compatibleVersions if its values decode both ways"
    }

    /// The migrations that take values stored at `stored` to ``version``, in order.
    ///
    /// - Throws: ``SchemaError`` when `stored` is newer than ``version`` or a step is missing.
    func path(from stored: UInt32, app: String, source: String) throws -> [SchemaMigration] {
        guard stored <= version else { throw SchemaError.newerData(app: app, stored: stored, current: version, source: source) }
        return try (stored..<version).map { step in
            guard let migration = migrations[step] else {
                throw SchemaError.noMigration(app: app, stored: stored, current: version, missing: step, source: source)
            }
            return migration
        }
    }
}
