import MessagePack

/// The protocol version this build speaks.
package let wireProtocolVersion: UInt64 = 1

/// Reads the header frame of a message: a MessagePack array `[version, kind, fields...]`, or on
/// the feed, where the topic frame names the kind, `[version, fields...]`.
///
/// Every accessor checks type and position and throws a ``ProtocolError`` that says which field
/// was wrong, so a hostile or broken peer gets a precise `malformed` answer, never a crash.
///
/// A header is read in place (``read(_:topic:_:)``): msgpack-c unpacks the frame into the
/// thread's zone and each field becomes a Swift value only when asked for, where a value tree
/// built first cost an array, a value per field and a checked `String` per string, read or not
/// (decoding an action's message: 8.8% of the sync authority's samples then, 8.0% now).
/// A header is valid only inside the body it is given to.
struct WireHeader {
    /// The message kind (`"action"`, `"emit"`, ...).
    let kind: String
    /// The whole header array.
    private let array: MessagePackView
    /// How many elements precede the fields: version and kind, or on the feed version only.
    private let prefix: Int
    /// The number of fields after version and kind.
    let fieldCount: Int

    /// Parses `frame`, checks its version and calls `body` with it; `topic` is given for feed headers.
    static func read<T>(_ frame: [UInt8], topic: String? = nil, _ body: (WireHeader) throws(ProtocolError) -> T) throws(ProtocolError) -> T {
        var outcome: Result<T, ProtocolError>?
        do {
            try MessagePackView.read(frame) { view in
                do throws(ProtocolError) {
                    outcome = .success(try body(WireHeader(view, topic: topic)))
                } catch {
                    outcome = .failure(error)
                }
            }
        } catch {
            throw .malformed("header is not MessagePack")
        }
        // Set whenever the frame unpacked: the body ran, and returned or threw.
        guard let outcome else { throw .malformed("header is not MessagePack") }
        return try outcome.get()
    }

    /// The kinds that arrive once per action or job, most frequent first, with their `String`.
    private static let commonKinds: [(bytes: StaticString, kind: String)] =
        (["action", "done", "emit", "job", "ack"] as [StaticString]).map { ($0, $0.description) }

    private init(_ view: MessagePackView, topic: String?) throws(ProtocolError) {
        let prefix = topic == nil ? 2 : 1
        guard let count = view.arrayCount, count >= prefix else {
            throw .malformed(topic == nil ? "header must be an array [version, kind, ...]" : "feed header must be an array [version, ...]")
        }
        guard let version = view.element(at: 0).uint else { throw .malformed("header version must be an unsigned integer") }
        guard version == wireProtocolVersion else {
            throw ProtocolError(.unsupportedVersion, "protocol version \(version) is not supported; this node speaks \(wireProtocolVersion)")
        }
        if let topic {
            self.kind = topic
        } else {
            let element = view.element(at: 1)
            // The common kinds are matched on their bytes and take a constant `String`: making
            // and checking a new one per message was a visible part of reading an action.
            if let known = Self.commonKinds.first(where: { element.isString($0.bytes) }) {
                self.kind = known.kind
            } else {
                guard let kind = element.string else { throw .malformed("header kind must be a string") }
                self.kind = kind
            }
        }
        self.array = view
        self.prefix = prefix
        self.fieldCount = count - prefix
    }

    /// Requires exactly `count` fields after version and kind.
    func expect(fields count: Int) throws(ProtocolError) {
        guard fieldCount == count else {
            throw .malformed("\(kind) header needs \(count) field\(count == 1 ? "" : "s") after version and kind, got \(fieldCount)")
        }
    }

    /// Requires at least `count` fields; for kinds that later protocol revisions extend with
    /// trailing fields, which an older reader ignores.
    func expect(atLeast count: Int) throws(ProtocolError) {
        guard fieldCount >= count else {
            throw .malformed("\(kind) header needs at least \(count) field\(count == 1 ? "" : "s") after version and kind, got \(fieldCount)")
        }
    }

    /// The field at `index` after version and kind, if there is one.
    private func field(_ index: Int) -> MessagePackView? {
        index >= 0 && index < fieldCount ? array.element(at: prefix + index) : nil
    }

    func uint(_ index: Int, _ name: String) throws(ProtocolError) -> UInt64 {
        guard let value = field(index)?.uint else {
            throw .malformed("\(kind).\(name) must be an unsigned integer")
        }
        return value
    }

    func uint32(_ index: Int, _ name: String) throws(ProtocolError) -> UInt32 {
        let value = try uint(index, name)
        guard let narrow = UInt32(exactly: value) else { throw .malformed("\(kind).\(name) must fit 32 bits") }
        return narrow
    }

    /// The string field at `index`; `reusing` is returned instead of a new `String` when its
    /// bytes are the field's (see ``MessagePackView/string(reusing:)``).
    func string(_ index: Int, _ name: String, maxBytes: Int = 1_024, reusing known: String? = nil) throws(ProtocolError) -> String {
        guard let value = field(index)?.string(reusing: known) else {
            throw .malformed("\(kind).\(name) must be a string")
        }
        guard value.utf8.count <= maxBytes else { throw .malformed("\(kind).\(name) is longer than \(maxBytes) bytes") }
        return value
    }

    func optionalUInt(_ index: Int, _ name: String) throws(ProtocolError) -> UInt64? {
        if field(index)?.isNil == true { return nil }
        return try uint(index, name)
    }

    func optionalString(_ index: Int, _ name: String, maxBytes: Int = 1_024) throws(ProtocolError) -> String? {
        if field(index)?.isNil == true { return nil }
        return try string(index, name, maxBytes: maxBytes)
    }

    func optionalUInt32(_ index: Int, _ name: String) throws(ProtocolError) -> UInt32? {
        if field(index)?.isNil == true { return nil }
        return try uint32(index, name)
    }

    func uint32s(_ index: Int, _ name: String) throws(ProtocolError) -> [UInt32] {
        guard let items = field(index), let count = items.arrayCount else {
            throw .malformed("\(kind).\(name) must be an array of unsigned integers")
        }
        var result: [UInt32] = []
        result.reserveCapacity(count)
        for position in 0 ..< count {
            guard let value = items.element(at: position).uint, let narrow = UInt32(exactly: value) else {
                throw .malformed("\(kind).\(name) must be an array of unsigned 32-bit integers")
            }
            result.append(narrow)
        }
        return result
    }

    /// The element count of a batched message (`jobs`, `reports`, `acks`): the header's only
    /// field, at least 1; its body frame holds that many elements.
    func batchCount() throws(ProtocolError) -> UInt64 {
        try expect(fields: 1)
        let count = try uint(0, "count")
        guard count >= 1 else { throw .malformed("\(kind).count must be at least 1") }
        return count
    }

    func strings(_ index: Int, _ name: String) throws(ProtocolError) -> [String] {
        guard let items = field(index), let count = items.arrayCount else {
            throw .malformed("\(kind).\(name) must be an array of strings")
        }
        var result: [String] = []
        result.reserveCapacity(count)
        for position in 0 ..< count {
            guard let text = items.element(at: position).string else { throw .malformed("\(kind).\(name) must be an array of strings") }
            result.append(text)
        }
        return result
    }

    /// The field as a value tree, for a field whose shape varies.
    func value(_ index: Int, _ name: String) throws(ProtocolError) -> MessagePackValue {
        guard let view = field(index) else { throw .malformed("\(kind).\(name) is missing") }
        guard let value = view.tree else { throw .malformed("\(kind).\(name) holds a string that is not UTF-8") }
        return value
    }
}

/// Writes header frames with one reusable msgpack-c buffer.
///
/// Not thread-safe: each node loop owns one.
package final class HeaderWriter {
    private let writer = MessagePackWriter()
    /// Packs the body frames that msgpack-c writes (``body(_:)``), apart from the header's.
    private let bodyWriter = MessagePackWriter()

    /// Creates a writer with an empty buffer.
    package init() {}

    /// Packs `[1, kind, fields...]` and returns the bytes.
    package func header(_ kind: String, _ fields: (MessagePackWriter) -> Void = { _ in }, count: Int) -> [UInt8] {
        [UInt8](packHeader(kind, count: count, fields))
    }

    /// Packs `[1, kind, fields...]` and returns the bytes where they were packed: valid until
    /// this writer packs again. A header sent at once needs no array of its own.
    package func packHeader(_ kind: String, count: Int, _ fields: (MessagePackWriter) -> Void) -> UnsafeRawBufferPointer {
        writer.reset()
        writer.packArrayHeader(2 + count)
        writer.packUInt(wireProtocolVersion)
        writer.packString(kind)
        fields(writer)
        return writer.withUnsafeBytes { $0 }
    }

    /// Packs a body frame with `fill` (a fixed-shape value such as a ``JobBatch``) and returns its bytes.
    package func body(_ fill: (MessagePackWriter) -> Void) -> [UInt8] {
        bodyWriter.reset()
        fill(bodyWriter)
        return bodyWriter.bytes
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

extension MessagePackWriter {
    /// Packs `strings` as one array of strings (the header fields that list kinds or features).
    package func packStrings(_ strings: [String]) {
        packArrayHeader(strings.count)
        for string in strings { packString(string) }
    }
}
