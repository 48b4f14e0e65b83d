/// Writes a struct-like value as a map with string keys, in encode order.
struct KeyedEncodingContainerImpl<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncoderNode
    let writer: MessagePackWriter

    var codingPath: [any CodingKey] { node.codingPath }

    @inline(__always) private func entry(_ key: Key) {
        writer.packString(key.stringValue)
        node.count += 1
    }

    mutating func encodeNil(forKey key: Key) throws { entry(key); writer.packNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { entry(key); writer.packBool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { entry(key); writer.packString(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { entry(key); writer.packDouble(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { entry(key); writer.packFloat(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { entry(key); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { entry(key); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { entry(key); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { entry(key); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { entry(key); writer.packInt(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { entry(key); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { entry(key); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { entry(key); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { entry(key); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { entry(key); writer.packUInt(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        entry(key)
        try node.session.encodeValue(value, into: writer, parent: node, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        entry(key)
        let (child, buffer) = node.makeDeferredContainer(.keyed, key: key)
        return KeyedEncodingContainer(KeyedEncodingContainerImpl<NestedKey>(node: child, writer: buffer))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        entry(key)
        let (child, buffer) = node.makeDeferredContainer(.unkeyed, key: key)
        return UnkeyedEncodingContainerImpl(node: child, writer: buffer)
    }

    mutating func superEncoder() -> any Encoder {
        writer.packString(MessagePackKey.super.stringValue)
        node.count += 1
        return node.makeDeferredChild(key: MessagePackKey.super)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        entry(key)
        return node.makeDeferredChild(key: key)
    }
}
