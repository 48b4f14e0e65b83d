import Foundation
import MessagePack

/// A JSON value with ordered object keys: the bench's report and the one-line messages its child
/// processes print on stdout.
///
/// Objects keep their insertion order so the report reads in phase order; numbers that are whole
/// print without a fraction. ``parse(_:)`` reads such lines back (a small reader of our own).
enum BenchJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([BenchJSON])
    case object([(String, BenchJSON)])

    static func == (lhs: BenchJSON, rhs: BenchJSON) -> Bool { lhs.rendered == rhs.rendered }

    /// A whole number.
    static func int<T: BinaryInteger>(_ value: T) -> BenchJSON { .int(Int64(clamping: value)) }

    /// A number rounded to `places` decimals (a non-finite one becomes `null`).
    static func number(_ value: Double, places: Int = 1) -> BenchJSON {
        guard value.isFinite else { return .null }
        let scale = pow(10, Double(places))
        return .double((value * scale).rounded() / scale)
    }

    // MARK: Reading

    /// The member `key` of an object.
    subscript(key: String) -> BenchJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    var intValue: Int64? {
        switch self {
        case .int(let value): value
        case .double(let value) where value.isFinite: Int64(value)
        default: nil
        }
    }

    var doubleValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    var arrayValue: [BenchJSON]? {
        if case .array(let value) = self { value } else { nil }
    }

    // MARK: Building

    /// Adds or replaces the member `key` of an object (ignored on other values).
    mutating func set(_ key: String, _ value: BenchJSON) {
        guard case .object(var members) = self else { return }
        if let index = members.firstIndex(where: { $0.0 == key }) {
            members[index].1 = value
        } else {
            members.append((key, value))
        }
        self = .object(members)
    }

    // MARK: Text

    /// Compact JSON text on one line.
    var rendered: String {
        var text = ""
        render(into: &text)
        return text
    }

    private func render(into text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .int(let value): text += String(value)
        case .double(let value):
            if !value.isFinite {
                text += "null"
            } else if value == value.rounded(), abs(value) < 1e15 {
                text += String(Int64(value))
            } else {
                text += String(value)
            }
        case .string(let value): Self.quote(value, into: &text)
        case .array(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                item.render(into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { text += "," }
                Self.quote(key, into: &text)
                text += ":"
                value.render(into: &text)
            }
            text += "}"
        }
    }

    /// A JSON string literal, escaped as the codec's JSON writer escapes it.
    private static func quote(_ value: String, into text: inout String) {
        text += MessagePackValue.string(value).jsonText()
    }

    /// Parses JSON text; `nil` when it is not one JSON value.
    static func parse(_ text: String) -> BenchJSON? {
        var parser = Parser(bytes: Array(text.utf8))
        guard let value = parser.value() else { return nil }
        parser.skipSpace()
        return parser.atEnd ? value : nil
    }

    /// A small recursive-descent reader for the JSON the bench and its children write.
    private struct Parser {
        let bytes: [UInt8]
        var position = 0
        var depth = 0

        var atEnd: Bool { position >= bytes.count }

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func value() -> BenchJSON? {
            skipSpace()
            guard position < bytes.count, depth < 64 else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "{"): return object()
            case UInt8(ascii: "["): return array()
            case UInt8(ascii: "\""): return string().map(BenchJSON.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return number()
            }
        }

        private mutating func literal(_ word: String, _ result: BenchJSON) -> BenchJSON? {
            let utf8 = Array(word.utf8)
            guard bytes.count - position >= utf8.count, Array(bytes[position..<position + utf8.count]) == utf8 else { return nil }
            position += utf8.count
            return result
        }

        private mutating func number() -> BenchJSON? {
            let start = position
            while position < bytes.count, "+-0123456789.eE".utf8.contains(bytes[position]) { position += 1 }
            guard position > start, let text = String(bytes: bytes[start..<position], encoding: .utf8) else { return nil }
            if let whole = Int64(text) { return .int(whole) }
            return Double(text).map(BenchJSON.double)
        }

        private mutating func string() -> String? {
            position += 1
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() {
                if !run.isEmpty { scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars); run.removeAll() }
            }
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush()
                    guard position < bytes.count else { return nil }
                    let escape = bytes[position]
                    position += 1
                    switch escape {
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{C}")
                    case UInt8(ascii: "u"):
                        guard bytes.count - position >= 4, let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16) else { return nil }
                        position += 4
                        scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                    default: scalars.append(Unicode.Scalar(escape))
                    }
                default:
                    run.append(byte)
                }
            }
            return nil
        }

        private mutating func array() -> BenchJSON? {
            position += 1
            depth += 1
            defer { depth -= 1 }
            var items: [BenchJSON] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array(items) }
            while true {
                guard let item = value() else { return nil }
                items.append(item)
                skipSpace()
                guard position < bytes.count else { return nil }
                let separator = bytes[position]
                position += 1
                if separator == UInt8(ascii: "]") { return .array(items) }
                guard separator == UInt8(ascii: ",") else { return nil }
            }
        }

        private mutating func object() -> BenchJSON? {
            position += 1
            depth += 1
            defer { depth -= 1 }
            var members: [(String, BenchJSON)] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
            while true {
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
                position += 1
                guard let member = value() else { return nil }
                members.append((key, member))
                skipSpace()
                guard position < bytes.count else { return nil }
                let separator = bytes[position]
                position += 1
                if separator == UInt8(ascii: "}") { return .object(members) }
                guard separator == UInt8(ascii: ",") else { return nil }
            }
        }
    }
}

extension BenchJSON: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral {
    init(stringLiteral value: String) { self = .string(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(integerLiteral value: Int64) { self = .int(value) }
}
