/// Writes a struct-like value as a map with string keys, in encode order.
struct KeyedEncodingContainerImpl<Key: CodingKey>: KeyedEncodingContainerProtocol {
    /// What the container writes through; the session re-points it when it hands the
    /// container out again (see ``KeptKeyedContainers``).
    let state: KeyedEncodingState

    init(node: EncoderNode, writer: MessagePackWriter) {
        state = KeyedEncodingState(node: node, writer: writer)
    }

    init(state: KeyedEncodingState) {
        self.state = state
    }

    /// Runs `body` with the value's node and writer.
    @inline(__always) private func with<Result>(_ body: (EncoderNode, MessagePackWriter) throws -> Result) rethrows -> Result {
        try state.withNodeAndWriter(body)
    }

    var codingPath: [any CodingKey] { with { node, _ in node.codingPath } }

    /// Writes `key`, counts the entry, then writes its value with `value`.
    @inline(__always) private func entry(_ key: Key, _ value: (MessagePackWriter) -> Void) {
        with { node, writer in
            writer.packString(key.stringValue)
            node.count += 1
            value(writer)
        }
    }

    mutating func encodeNil(forKey key: Key) throws { entry(key) { $0.packNil() } }
    mutating func encode(_ value: Bool, forKey key: Key) throws { entry(key) { $0.packBool(value) } }
    mutating func encode(_ value: String, forKey key: Key) throws { entry(key) { $0.packString(value) } }
    mutating func encode(_ value: Double, forKey key: Key) throws { entry(key) { $0.packDouble(value) } }
    mutating func encode(_ value: Float, forKey key: Key) throws { entry(key) { $0.packFloat(value) } }
    mutating func encode(_ value: Int, forKey key: Key) throws { entry(key) { $0.packInt(Int64(value)) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { entry(key) { $0.packInt(Int64(value)) } }
    mutating func encode(_ value: Int16, forKey key: Key) throws { entry(key) { $0.packInt(Int64(value)) } }
    mutating func encode(_ value: Int32, forKey key: Key) throws { entry(key) { $0.packInt(Int64(value)) } }
    mutating func encode(_ value: Int64, forKey key: Key) throws { entry(key) { $0.packInt(value) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws { entry(key) { $0.packUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { entry(key) { $0.packUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { entry(key) { $0.packUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { entry(key) { $0.packUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { entry(key) { $0.packUInt(value) } }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try with { node, writer in
            writer.packString(key.stringValue)
            node.count += 1
            try node.session.encodeValue(value, into: writer, parent: node, key: key)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        entry(key) { _ in }
        return with { node, _ in
            let (child, buffer) = node.makeDeferredContainer(.keyed, key: key)
            return node.session.keyedContainer(NestedKey.self, node: child, writer: buffer)
        }
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        entry(key) { _ in }
        let (child, buffer) = with { node, _ in node.makeDeferredContainer(.unkeyed, key: key) }
        return UnkeyedEncodingContainerImpl(node: child, writer: buffer)
    }

    mutating func superEncoder() -> any Encoder {
        with { node, writer in
            writer.packString(MessagePackKey.super.stringValue)
            node.count += 1
            return node.makeDeferredChild(key: MessagePackKey.super)
        }
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        entry(key) { _ in }
        return with { node, _ in node.makeDeferredChild(key: key) }
    }
}
