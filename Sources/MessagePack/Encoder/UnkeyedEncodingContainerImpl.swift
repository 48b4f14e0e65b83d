/// Writes a sequence as a msgpack array.
struct UnkeyedEncodingContainerImpl: UnkeyedEncodingContainer {
    let node: EncoderNode
    let writer: MessagePackWriter

    var codingPath: [any CodingKey] { node.codingPath }
    var count: Int { node.count }

    @inline(__always) private func element() { node.count += 1 }

    mutating func encodeNil() throws { element(); writer.packNil() }
    mutating func encode(_ value: Bool) throws { element(); writer.packBool(value) }
    mutating func encode(_ value: String) throws { element(); writer.packString(value) }
    mutating func encode(_ value: Double) throws { element(); writer.packDouble(value) }
    mutating func encode(_ value: Float) throws { element(); writer.packFloat(value) }
    mutating func encode(_ value: Int) throws { element(); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int8) throws { element(); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int16) throws { element(); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int32) throws { element(); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int64) throws { element(); writer.packInt(value) }
    mutating func encode(_ value: UInt) throws { element(); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { element(); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { element(); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { element(); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { element(); writer.packUInt(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = node.count
        element()
        try node.session.encodeValue(value, into: writer, parent: node, key: MessagePackKey.index(index))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let key = MessagePackKey.index(node.count)
        element()
        let (child, buffer) = node.makeDeferredContainer(.keyed, key: key)
        return KeyedEncodingContainer(KeyedEncodingContainerImpl<NestedKey>(node: child, writer: buffer))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = MessagePackKey.index(node.count)
        element()
        let (child, buffer) = node.makeDeferredContainer(.unkeyed, key: key)
        return UnkeyedEncodingContainerImpl(node: child, writer: buffer)
    }

    mutating func superEncoder() -> any Encoder {
        let key = MessagePackKey.index(node.count)
        element()
        return node.makeDeferredChild(key: key)
    }
}
