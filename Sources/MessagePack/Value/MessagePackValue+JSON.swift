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
/// - map keys that are not strings are written as their JSON text (`1` → `"1"`).
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
            var named = entries.map { entry -> (name: String, value: MessagePackValue) in
                if case .string(let name) = entry.key { return (name, entry.value) }
                return (entry.key.jsonText(sortedKeys: sortedKeys), entry.value)
            }
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
