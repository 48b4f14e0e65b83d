/// A strict RFC 8259 JSON parser producing ``MessagePackValue``s, keeping
/// integers exact (they never pass through `Double`).
struct JSONParser {
    private let bytes: [UInt8]
    private var offset = 0
    private var depth = 0

    init(text: String) {
        bytes = Array(text.utf8)
    }

    mutating func parseDocument() throws -> MessagePackValue {
        let value = try parseValue()
        skipWhitespace()
        guard offset == bytes.count else { throw failure("unexpected text after the JSON value") }
        return value
    }

    private func failure(_ message: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "Invalid JSON at byte \(offset): \(message)."))
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x0a, 0x0d, 0x09].contains(bytes[offset]) { offset += 1 }
    }

    private mutating func expect(_ literal: String, _ value: MessagePackValue) throws -> MessagePackValue {
        let expected = Array(literal.utf8)
        guard bytes.count - offset >= expected.count, Array(bytes[offset ..< offset + expected.count]) == expected else {
            throw failure("expected \(literal)")
        }
        offset += expected.count
        return value
    }

    private mutating func parseValue() throws -> MessagePackValue {
        skipWhitespace()
        guard offset < bytes.count else { throw failure("unexpected end of text") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .nil)
        case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    private mutating func enter() throws {
        depth += 1
        guard depth <= MessagePack.maximumNestingDepth else {
            throw failure("nesting deeper than \(MessagePack.maximumNestingDepth) levels")
        }
    }

    private mutating func parseObject() throws -> MessagePackValue {
        try enter()
        defer { depth -= 1 }
        offset += 1
        var entries: [(key: MessagePackValue, value: MessagePackValue)] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") { offset += 1; return .map(entries) }
        while true {
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            offset += 1
            entries.append((.string(key), try parseValue()))
            skipWhitespace()
            guard offset < bytes.count else { throw failure("unterminated object") }
            if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
            if bytes[offset] == UInt8(ascii: "}") { offset += 1; return .map(entries) }
            throw failure("expected ',' or '}'")
        }
    }

    private mutating func parseArray() throws -> MessagePackValue {
        try enter()
        defer { depth -= 1 }
        offset += 1
        var elements: [MessagePackValue] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(elements) }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            guard offset < bytes.count else { throw failure("unterminated array") }
            if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
            if bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(elements) }
            throw failure("expected ',' or ']'")
        }
    }

    private mutating func parseNumber() throws -> MessagePackValue {
        let start = offset
        var isInteger = true
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard offset < bytes.count, isDigit(bytes[offset]) else { throw failure("expected a digit") }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw failure("expected a fraction digit") }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw failure("expected an exponent digit") }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        let lexeme = String(decoding: bytes[start ..< offset], as: UTF8.self)
        if isInteger {
            // `-0` is zero, not a negative number: `.uint(0)`, as MessagePack itself reads it back.
            if lexeme.hasPrefix("-"), let value = Int64(lexeme) { return value < 0 ? .int(value) : .uint(0) }
            if let value = UInt64(lexeme) { return .uint(value) }
        }
        guard let value = Double(lexeme) else { throw failure("number out of range") }
        return .double(value)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws -> String {
        offset += 1
        var scalars = String.UnicodeScalarView()
        var runStart = offset
        var result = ""
        func flushRun(_ end: Int) {
            result += String(decoding: bytes[runStart ..< end], as: UTF8.self)
        }
        while true {
            guard offset < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                flushRun(offset)
                offset += 1
                return result
            }
            if byte < 0x20 { throw failure("control character in string") }
            if byte != UInt8(ascii: "\\") { offset += 1; continue }
            flushRun(offset)
            offset += 1
            guard offset < bytes.count else { throw failure("unterminated escape") }
            let escape = bytes[offset]
            offset += 1
            switch escape {
            case UInt8(ascii: "\""): result += "\""
            case UInt8(ascii: "\\"): result += "\\"
            case UInt8(ascii: "/"): result += "/"
            case UInt8(ascii: "b"): result += "\u{08}"
            case UInt8(ascii: "f"): result += "\u{0C}"
            case UInt8(ascii: "n"): result += "\n"
            case UInt8(ascii: "r"): result += "\r"
            case UInt8(ascii: "t"): result += "\t"
            case UInt8(ascii: "u"):
                scalars.removeAll()
                scalars.append(try parseUnicodeEscape())
                result.unicodeScalars.append(contentsOf: scalars)
            default: throw failure("invalid escape")
            }
            runStart = offset
        }
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard bytes.count - offset >= 4 else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0 ..< 4 {
            guard let digit = hexValue(bytes[offset]) else { throw failure("invalid hex digit") }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    private func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    private mutating func parseUnicodeEscape() throws -> Unicode.Scalar {
        let first = try parseHex4()
        if (0xD800 ... 0xDBFF).contains(first) {
            guard bytes.count - offset >= 2, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                throw failure("unpaired surrogate")
            }
            offset += 2
            let second = try parseHex4()
            guard (0xDC00 ... 0xDFFF).contains(second),
                  let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)) else {
                throw failure("invalid surrogate pair")
            }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw failure("unpaired surrogate") }
        return scalar
    }
}
