import Foundation

/// Conversion between ``MessagePackValue`` and JSON text, for the CLI
/// (actions typed as JSON, snapshots printed as JSON).
///
/// JSON → value: objects become maps with string keys (in text order),
/// arrays become arrays, `true`/`false`/`null` become bools/nil, strings stay
/// strings. Numbers without fraction or exponent become ``uint(_:)`` (or
/// ``int(_:)`` when negative) with full 64-bit precision; integers beyond the
/// 64-bit range and all other numbers become ``double(_:)``. Nesting deeper
/// than ``MessagePack/maximumNestingDepth`` is rejected, since the result
/// could not be decoded again.
///
/// Value → JSON (compact, UTF-8 kept as is):
/// - `binary` → base64 string; `timestamp` → RFC 3339 UTC string with up to
///   nine fraction digits (e.g. `"2023-11-14T22:13:20.5Z"`);
/// - `float`/`double`: shortest round-tripping decimal; integral doubles keep
///   a `.0` so they read back as doubles. **NaN and ±infinity become `null`**
///   (JSON has no representation for them);
/// - `extension` → `{"data": "<base64>", "type": <n>}`;
/// - map keys that are not strings are written as their JSON text (`1` → `"1"`), except a
///   key with keys of its own nested three or more levels deep, written as the base64 of its
///   MessagePack encoding (see ``jsonKeyName(sortedKeys:)``).
///
/// These last three are one-way: reading the JSON back gives `nil`, a map and
/// string keys respectively.
extension MessagePackValue {
    /// Parses JSON text.
    /// - Throws: `DecodingError.dataCorrupted` describing the first syntax
    ///   error and its byte offset.
    public init(jsonText: String) throws {
        var parser = JSONParser(text: jsonText)
        self = try parser.parseDocument()
    }

    /// Renders this value as compact JSON text.
    /// - Parameter sortedKeys: write object keys in ascending order (default),
    ///   so equal values print identically; otherwise keep map order.
    public func jsonText(sortedKeys: Bool = true) -> String {
        var output = ""
        writeJSON(into: &output, sortedKeys: sortedKeys)
        return output
    }

    /// The name this value gets as a map key in ``jsonText(sortedKeys:)``: a string is its own
    /// name, any other value its JSON text, except a value whose own non-string map keys nest
    /// three or more levels deep (a key of a key of a key), named by the base64 of its
    /// MessagePack encoding.
    ///
    /// Each level of a key inside a key quotes the inner text once more, which doubles its
    /// backslashes: without the bound, 45 bytes of nested one-entry maps would print as
    /// gigabytes. With it, a key's name is at most about eight times its own JSON text.
    public func jsonKeyName(sortedKeys: Bool = true) -> String {
        if case .string(let name) = self { return name }
        if keyNesting(upTo: Self.keyNestingNamedByText) >= Self.keyNestingNamedByText {
            return Data(pack()).base64EncodedString()
        }
        return jsonText(sortedKeys: sortedKeys)
    }

    /// How deep non-string map keys nest in a value that is still named by its JSON text, plus one.
    private static let keyNestingNamedByText = 3

    /// The levels of non-string map keys inside keys in this value (0: none), counted up to
    /// `limit`: a map whose key is a map with a number key is 2.
    private func keyNesting(upTo limit: Int) -> Int {
        var deepest = 0
        switch self {
        case .array(let elements):
            for element in elements where deepest < limit { deepest = max(deepest, element.keyNesting(upTo: limit)) }
        case .map(let entries):
            for entry in entries where deepest < limit {
                deepest = max(deepest, entry.value.keyNesting(upTo: limit))
                if case .string = entry.key { continue }
                deepest = max(deepest, 1 + entry.key.keyNesting(upTo: limit - 1))
            }
        default:
            break
        }
        return deepest
    }

    private func writeJSON(into output: inout String, sortedKeys: Bool) {
        switch self {
        case .nil: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .uint(let value): output += String(value)
        case .float(let value): output += value.isFinite ? value.description : "null"
        case .double(let value): output += value.isFinite ? value.description : "null"
        case .string(let value): Self.writeJSONString(value, into: &output)
        case .binary(let bytes): Self.writeJSONString(Data(bytes).base64EncodedString(), into: &output)
        case .timestamp(let seconds, let nanoseconds):
            Self.writeJSONString(RFC3339.format(seconds: seconds, nanoseconds: nanoseconds), into: &output)
        case .extension(let type, let data):
            output += "{\"data\":"
            Self.writeJSONString(Data(data).base64EncodedString(), into: &output)
            output += ",\"type\":\(type)}"
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.writeJSON(into: &output, sortedKeys: sortedKeys)
            }
            output += "]"
        case .map(let entries):
            var named = entries.map { (name: $0.key.jsonKeyName(sortedKeys: sortedKeys), value: $0.value) }
            if sortedKeys { named.sort { $0.name < $1.name } }
            output += "{"
            for (index, entry) in named.enumerated() {
                if index > 0 { output += "," }
                Self.writeJSONString(entry.name, into: &output)
                output += ":"
                entry.value.writeJSON(into: &output, sortedKeys: sortedKeys)
            }
            output += "}"
        }
    }

    private static func writeJSONString(_ value: String, into output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
