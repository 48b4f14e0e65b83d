import MessagePack

/// The protocol version this build speaks.
package let wireProtocolVersion: UInt64 = 1

/// Reads the header frame of a message: a MessagePack array `[version, kind, fields...]`, or on
/// the feed, where the topic frame names the kind, `[version, fields...]`.
///
/// Every accessor checks type and position and throws a ``ProtocolError`` that says which field
/// was wrong, so a hostile or broken peer gets a precise `malformed` answer, never a crash.
struct WireHeader {
    /// The message kind (`"action"`, `"emit"`, ...).
    let kind: String
    /// The fields after version and kind: a slice of the header's array, not a copy.
    private let fields: ArraySlice<MessagePackValue>

    /// Parses a header frame and checks the version; `topic` is given for feed headers.
    init(_ frame: [UInt8], topic: String? = nil) throws(ProtocolError) {
        let value: MessagePackValue
        do {
            value = try MessagePackValue(unpacking: frame)
        } catch {
            throw .malformed("header is not MessagePack")
        }
        let prefix = topic == nil ? 2 : 1
        guard case .array(let items) = value, items.count >= prefix else {
            throw .malformed(topic == nil ? "header must be an array [version, kind, ...]" : "feed header must be an array [version, ...]")
        }
        guard case .uint(let version) = items[0] else { throw .malformed("header version must be an unsigned integer") }
        guard version == wireProtocolVersion else {
            throw ProtocolError(.unsupportedVersion, "protocol version \(version) is not supported; this node speaks \(wireProtocolVersion)")
        }
        if let topic {
            self.kind = topic
        } else {
            guard case .string(let kind) = items[1] else { throw .malformed("header kind must be a string") }
            self.kind = kind
        }
        self.fields = items.dropFirst(prefix)
    }

    /// Requires exactly `count` fields after version and kind.
    func expect(fields count: Int) throws(ProtocolError) {
        guard fields.count == count else {
            throw .malformed("\(kind) header needs \(count) field\(count == 1 ? "" : "s") after version and kind, got \(fields.count)")
        }
    }

    /// Requires at least `count` fields; for kinds that later protocol revisions extend with
    /// trailing fields, which an older reader ignores.
    func expect(atLeast count: Int) throws(ProtocolError) {
        guard fields.count >= count else {
            throw .malformed("\(kind) header needs at least \(count) field\(count == 1 ? "" : "s") after version and kind, got \(fields.count)")
        }
    }

    /// The number of fields after version and kind.
    var fieldCount: Int { fields.count }

    /// The field at `index` after version and kind, if there is one.
    private func field(_ index: Int) -> MessagePackValue? {
        index >= 0 && index < fields.count ? fields[fields.startIndex + index] : nil
    }

    func uint(_ index: Int, _ name: String) throws(ProtocolError) -> UInt64 {
        guard case .uint(let value)? = field(index) else {
            throw .malformed("\(kind).\(name) must be an unsigned integer")
        }
        return value
    }

    func uint32(_ index: Int, _ name: String) throws(ProtocolError) -> UInt32 {
        let value = try uint(index, name)
        guard let narrow = UInt32(exactly: value) else { throw .malformed("\(kind).\(name) must fit 32 bits") }
        return narrow
    }

    func string(_ index: Int, _ name: String, maxBytes: Int = 1_024) throws(ProtocolError) -> String {
        guard case .string(let value)? = field(index) else {
            throw .malformed("\(kind).\(name) must be a string")
        }
        guard value.utf8.count <= maxBytes else { throw .malformed("\(kind).\(name) is longer than \(maxBytes) bytes") }
        return value
    }

    func optionalUInt(_ index: Int, _ name: String) throws(ProtocolError) -> UInt64? {
        if case .nil? = field(index) { return nil }
        return try uint(index, name)
    }

    func optionalString(_ index: Int, _ name: String, maxBytes: Int = 1_024) throws(ProtocolError) -> String? {
        if case .nil? = field(index) { return nil }
        return try string(index, name, maxBytes: maxBytes)
    }

    func optionalUInt32(_ index: Int, _ name: String) throws(ProtocolError) -> UInt32? {
        if case .nil? = field(index) { return nil }
        return try uint32(index, name)
    }

    func uint32s(_ index: Int, _ name: String) throws(ProtocolError) -> [UInt32] {
        guard case .array(let items)? = field(index) else {
            throw .malformed("\(kind).\(name) must be an array of unsigned integers")
        }
        var result: [UInt32] = []
        for item in items {
            guard case .uint(let value) = item, let narrow = UInt32(exactly: value) else {
                throw .malformed("\(kind).\(name) must be an array of unsigned 32-bit integers")
            }
            result.append(narrow)
        }
        return result
    }

    func strings(_ index: Int, _ name: String) throws(ProtocolError) -> [String] {
        guard case .array(let items)? = field(index) else {
            throw .malformed("\(kind).\(name) must be an array of strings")
        }
        var result: [String] = []
        for item in items {
            guard case .string(let text) = item else { throw .malformed("\(kind).\(name) must be an array of strings") }
            result.append(text)
        }
        return result
    }

    func value(_ index: Int, _ name: String) throws(ProtocolError) -> MessagePackValue {
        guard let value = field(index) else { throw .malformed("\(kind).\(name) is missing") }
        return value
    }
}

/// Writes header frames with one reusable msgpack-c buffer.
///
/// Not thread-safe: each node loop owns one.
package final class HeaderWriter {
    private let writer = MessagePackWriter()

    /// Creates a writer with an empty buffer.
    package init() {}

    /// Packs `[1, kind, fields...]` and returns the bytes.
    package func header(_ kind: String, _ fields: (MessagePackWriter) -> Void = { _ in }, count: Int) -> [UInt8] {
        writer.reset()
        writer.packArrayHeader(2 + count)
        writer.packUInt(wireProtocolVersion)
        writer.packString(kind)
        fields(writer)
        return writer.bytes
    }

    /// Packs a feed header `[1, fields...]` (the topic is its own frame).
    package func feedHeader(count: Int, _ fields: (MessagePackWriter) -> Void) -> [UInt8] {
        writer.reset()
        writer.packArrayHeader(1 + count)
        writer.packUInt(wireProtocolVersion)
        fields(writer)
        return writer.bytes
    }
}
