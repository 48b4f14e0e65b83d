import Foundation

/// Reading etcd's v3 JSON gateway answers: a JSON object whose 64-bit numbers are strings, whose
/// keys and values are base64, and which leaves out every field at its default (0, false, empty).
///
/// Every accessor throws ``CoordinationError/badResponse(endpoint:detail:)`` on anything else,
/// so a garbled or foreign answer is an error, never a crash.
package struct EtcdJSON {
    /// The endpoint that answered, for error messages.
    package let endpoint: String
    /// The object.
    package let object: [String: Any]

    /// Parses `body` as one JSON object.
    package init(_ body: [UInt8], from endpoint: String) throws(CoordinationError) {
        self.endpoint = endpoint
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(body), options: [])
        } catch {
            throw .badResponse(endpoint: endpoint, detail: "not JSON: \(Self.excerpt(body))")
        }
        guard let object = parsed as? [String: Any] else {
            throw .badResponse(endpoint: endpoint, detail: "not a JSON object: \(Self.excerpt(body))")
        }
        self.object = object
    }

    package init(_ object: [String: Any], from endpoint: String) {
        self.endpoint = endpoint
        self.object = object
    }

    /// A 64-bit integer field (a JSON string, or a plain number); `absent` when it is left out.
    package func int64(_ name: String, absent: Int64? = 0) throws(CoordinationError) -> Int64 {
        switch object[name] {
        case nil:
            guard let absent else { throw missing(name) }
            return absent
        case let text as String:
            guard let value = Int64(text) else { throw wrong(name, "an integer") }
            return value
        case let number as NSNumber:
            // A whole number only: "2.5" does not read as an integer.
            guard let value = Int64(number.stringValue) else { throw wrong(name, "an integer") }
            return value
        default:
            throw wrong(name, "an integer")
        }
    }

    /// A boolean field; false when left out.
    package func bool(_ name: String) throws(CoordinationError) -> Bool {
        switch object[name] {
        case nil: return false
        case let value as Bool: return value
        default: throw wrong(name, "a boolean")
        }
    }

    /// A text field; `nil` when left out.
    package func string(_ name: String) throws(CoordinationError) -> String? {
        switch object[name] {
        case nil: return nil
        case let value as String: return value
        default: throw wrong(name, "a string")
        }
    }

    /// A base64 field as bytes; empty when left out.
    package func bytes(_ name: String) throws(CoordinationError) -> Data {
        guard let text = try string(name) else { return Data() }
        guard let data = Data(base64Encoded: text) else { throw wrong(name, "base64") }
        return data
    }

    /// A nested object; `nil` when left out.
    package func object(_ name: String) throws(CoordinationError) -> EtcdJSON? {
        switch object[name] {
        case nil: return nil
        case let value as [String: Any]: return EtcdJSON(value, from: endpoint)
        default: throw wrong(name, "an object")
        }
    }

    /// An array of objects; empty when left out.
    package func objects(_ name: String) throws(CoordinationError) -> [EtcdJSON] {
        switch object[name] {
        case nil: return []
        case let values as [Any]:
            var result: [EtcdJSON] = []
            for value in values {
                guard let item = value as? [String: Any] else { throw wrong(name, "an array of objects") }
                result.append(EtcdJSON(item, from: endpoint))
            }
            return result
        default: throw wrong(name, "an array")
        }
    }

    /// The header's revision (every answer but a keepalive's error carries one).
    package func headerRevision() throws(CoordinationError) -> Int64 {
        guard let header = try object("header") else { throw missing("header") }
        return try header.int64("revision", absent: nil)
    }

    /// A key-value entry (`kvs` items).
    package func keyValue() throws(CoordinationError) -> EtcdKeyValue {
        let keyBytes = try bytes("key")
        return EtcdKeyValue(key: String(decoding: keyBytes, as: UTF8.self), value: try bytes("value"),
                            createRevision: try int64("create_revision"), modRevision: try int64("mod_revision"),
                            version: try int64("version"), lease: try int64("lease"))
    }

    private func missing(_ name: String) -> CoordinationError {
        .badResponse(endpoint: endpoint, detail: "no \"\(name)\" field")
    }

    private func wrong(_ name: String, _ expected: String) -> CoordinationError {
        .badResponse(endpoint: endpoint, detail: "\"\(name)\" is not \(expected)")
    }

    /// The start of a body, printable, for error messages.
    package static func excerpt(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(120), as: UTF8.self)
            .map { $0.isASCII && ($0.isLetter || $0.isNumber || $0.isPunctuation || $0.isSymbol || $0 == " ") ? $0 : "." }
        return body.isEmpty ? "(empty)" : "'" + String(text) + (body.count > 120 ? "...'" : "'")
    }
}
