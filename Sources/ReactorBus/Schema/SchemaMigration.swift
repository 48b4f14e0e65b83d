import MessagePack

/// One step of an app's schema history: how values stored at version ``from`` become values of
/// version `from + 1`.
///
/// Each closure gets a stored value as a MessagePack value tree (maps keyed by the field names
/// of the old types) and returns the tree the new types decode; the default leaves a value as it
/// is. Only ``state`` is required: actions, mutations and effects often keep their shape.
/// Migrations run once, when an authority starts on an older data directory; it then writes new
/// data at the new version.
public struct SchemaMigration: Sendable {
    /// A conversion of one stored value.
    public typealias Convert = @Sendable (MessagePackValue) throws -> MessagePackValue

    /// The version this step starts from.
    public let from: UInt32
    public var state: Convert
    public var action: Convert
    public var mutation: Convert
    public var effect: Convert

    /// The step from `from` to `from + 1`.
    public init(from: UInt32, state: @escaping Convert, action: @escaping Convert = { $0 },
                mutation: @escaping Convert = { $0 }, effect: @escaping Convert = { $0 }) {
        self.from = from
        self.state = state
        self.action = action
        self.mutation = mutation
        self.effect = effect
    }
}
