import Foundation
import MessagePack

/// The bench's JSON (its report and the one-line events its peers print on stdout) is the
/// package's one JSON value: ``MessagePackValue``, written with `jsonText(sortedKeys: false)`
/// (objects keep their insertion order, so the report reads in phase order) and read with
/// `MessagePackValue(jsonText:)`. These helpers only build and read such values tersely.
extension MessagePackValue {
    /// An object whose members keep their order.
    static func object(_ members: [(String, MessagePackValue)]) -> MessagePackValue {
        .map(members.map { (key: .string($0.0), value: $0.1) })
    }

    /// A whole number, of any integer type.
    static func whole<T: BinaryInteger>(_ value: T) -> MessagePackValue {
        value < 0 ? .int(Int64(clamping: value)) : .uint(UInt64(clamping: value))
    }

    /// A number rounded to `places` decimals; a whole one is written without a fraction and a
    /// non-finite one becomes `null`.
    static func number(_ value: Double, places: Int = 1) -> MessagePackValue {
        guard value.isFinite else { return .nil }
        let scale = pow(10, Double(places))
        let rounded = (value * scale).rounded() / scale
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? .whole(Int64(rounded)) : .double(rounded)
    }

    /// Compact JSON text on one line, members in their order.
    var rendered: String { jsonText(sortedKeys: false) }

    /// One JSON value read from `text`; `nil` when the text is not exactly one.
    static func parse(_ text: String) -> MessagePackValue? {
        try? MessagePackValue(jsonText: text)
    }

    /// The member `key` of an object.
    subscript(key: String) -> MessagePackValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .string(key) }?.value
    }

    /// Adds or replaces the member `key` of an object (ignored on other values).
    mutating func set(_ key: String, _ value: MessagePackValue) {
        guard case .map(var entries) = self else { return }
        if let index = entries.firstIndex(where: { $0.key == .string(key) }) {
            entries[index].value = value
        } else {
            entries.append((key: .string(key), value: value))
        }
        self = .map(entries)
    }

    var intValue: Int64? {
        switch self {
        case .int(let value): value
        case .uint(let value): Int64(exactly: value)
        case .double(let value) where value.isFinite: Int64(exactly: value.rounded(.towardZero))
        default: nil
        }
    }

    var doubleValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .uint(let value): Double(value)
        case .double(let value): value
        case .float(let value): Double(value)
        default: nil
        }
    }

    var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    var arrayValue: [MessagePackValue]? {
        if case .array(let value) = self { value } else { nil }
    }
}

extension MessagePackValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
