/// Lets the encoder write dictionaries itself, so that keys keep their wire
/// type (integer keys stay integers) and are sorted when `sortKeys` is set.
protocol EncodableDictionary {
    /// Writes the dictionary, or returns `false` to let `encode(to:)` handle it.
    func encodeMessagePackMap(
        session: EncodingSession, writer: MessagePackWriter, parent: EncoderNode?, key: (any CodingKey)?
    ) throws -> Bool
}

extension Dictionary: EncodableDictionary where Key: Encodable, Value: Encodable {
    func encodeMessagePackMap(
        session: EncodingSession, writer: MessagePackWriter, parent: EncoderNode?, key: (any CodingKey)?
    ) throws -> Bool {
        // Dictionaries of scalars are written by code specialised for them (this function runs
        // unspecialised, reached through the protocol), with the same bytes.
        if ScalarMapEncoding.encode(self, sortKeys: session.sortKeys, into: writer) { return true }
        // Sorting sorts the keys' positions, not (key, value) pairs: moving a pair of a generic
        // value costs a retain and a release per move, most of encoding a dictionary of a
        // million entries.
        if Key.self == String.self {
            let keys = self.keys.map { unsafeBitCast($0, to: String.self) }
            let order = session.sortKeys ? keys.indices.sorted { keys[$0] < keys[$1] } : nil
            try Self.write(keys: keys, values: Array(values), order: order, session: session, writer: writer, parent: parent, key: key) { entryKey in
                writer.packString(entryKey)
                return MessagePackKey.string(entryKey)
            }
            return true
        }
        if Key.self == Int.self {
            let keys = self.keys.map { unsafeBitCast($0, to: Int.self) }
            var order: [Int]?
            if session.sortKeys {
                var (sortedKeys, positions) = (keys, Array(keys.indices))
                IntegerKeyOrder.sort(&sortedKeys, carrying: &positions)
                order = positions
            }
            try Self.write(keys: keys, values: Array(values), order: order, session: session, writer: writer, parent: parent, key: key) { entryKey in
                writer.packInt(Int64(entryKey))
                return MessagePackKey.index(entryKey)
            }
            return true
        }
        if Key.self is any CodingKeyRepresentable.Type {
            // Swift writes these through a keyed container using the key's
            // `codingKey.stringValue`; do the same, sorted.
            var entries: [(key: String, value: Value)] = []
            entries.reserveCapacity(count)
            for (entryKey, value) in self {
                guard let codingKey = (entryKey as? any CodingKeyRepresentable)?.codingKey else { return false }
                entries.append((codingKey.stringValue, value))
            }
            if session.sortKeys { entries.sort { $0.key < $1.key } }
            try Self.write(entries, session: session, writer: writer, parent: parent, key: key) { entryKey in
                writer.packString(entryKey)
                return MessagePackKey.string(entryKey)
            }
            return true
        }
        guard session.sortKeys else { return false }
        try writeSortedPairs(session: session, writer: writer, parent: parent, key: key)
        return true
    }

    private static func write<K>(
        _ entries: [(key: K, value: Value)], session: EncodingSession, writer: MessagePackWriter,
        parent: EncoderNode?, key: (any CodingKey)?, packKey: (K) -> any CodingKey
    ) throws {
        var node = session.makeNode(parent: parent, key: key, target: nil)
        writer.packMapHeader(entries.count)
        for entry in entries {
            let entryKey = packKey(entry.key)
            try session.encodeValue(entry.value, into: writer, parent: node, key: entryKey)
        }
        session.recycle(&node)
    }

    /// Writes `keys[i]: values[i]` for each `i` of `order` (every position in turn when `nil`).
    private static func write<K>(
        keys: [K], values: [Value], order: [Int]?, session: EncodingSession, writer: MessagePackWriter,
        parent: EncoderNode?, key: (any CodingKey)?, packKey: (K) -> any CodingKey
    ) throws {
        var node = session.makeNode(parent: parent, key: key, target: nil)
        writer.packMapHeader(keys.count)
        if let order {
            for index in order {
                try session.encodeValue(values[index], into: writer, parent: node, key: packKey(keys[index]))
            }
        } else {
            for index in keys.indices {
                try session.encodeValue(values[index], into: writer, parent: node, key: packKey(keys[index]))
            }
        }
        session.recycle(&node)
    }

    /// Other key types: Swift's own format, a flat array `[k1, v1, k2, v2, …]`,
    /// with pairs ordered by the encoded bytes of their keys.
    private func writeSortedPairs(
        session: EncodingSession, writer: MessagePackWriter, parent: EncoderNode?, key: (any CodingKey)?
    ) throws {
        var node = session.makeNode(parent: parent, key: key, target: nil)
        let scratch = MessagePackWriter()
        var pairs: [(keyBytes: [UInt8], value: Value)] = []
        pairs.reserveCapacity(count)
        for (index, entry) in enumerated() {
            scratch.reset()
            try session.encodeValue(entry.key, into: scratch, parent: node, key: MessagePackKey.index(index * 2))
            pairs.append((scratch.bytes, entry.value))
        }
        pairs.sort { $0.keyBytes.lexicographicallyPrecedes($1.keyBytes) }
        writer.packArrayHeader(pairs.count * 2)
        for (index, pair) in pairs.enumerated() {
            pair.keyBytes.withUnsafeBytes { writer.appendEncoded($0) }
            try session.encodeValue(pair.value, into: writer, parent: node, key: MessagePackKey.index(index * 2 + 1))
        }
        session.recycle(&node)
    }
}
