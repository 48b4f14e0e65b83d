/// A coding key for map keys and array indices that have no static `CodingKey` type.
///
/// Kept to two words plus a tag so that it fits inline in an `any CodingKey`
/// existential (no allocation when building coding paths).
public enum MessagePackKey: CodingKey, Sendable, Hashable {
    case string(String)
    case index(Int)

    public init(stringValue: String) { self = .string(stringValue) }
    public init(intValue: Int) { self = .index(intValue) }

    public var stringValue: String {
        switch self {
        case .string(let value): return value
        case .index(let value): return "Index \(value)"
        }
    }

    public var intValue: Int? {
        if case .index(let value) = self { return value }
        return nil
    }

    /// The key Foundation's coders use for `superEncoder()`/`superDecoder()`.
    static let `super` = MessagePackKey.string("super")
}
