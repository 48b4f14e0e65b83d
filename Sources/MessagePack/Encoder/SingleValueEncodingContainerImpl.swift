/// Writes exactly one value, either into the parent's buffer directly or into the node's own.
struct SingleValueEncodingContainerImpl: SingleValueEncodingContainer {
    let node: EncoderNode
    let writer: MessagePackWriter

    var codingPath: [any CodingKey] { node.codingPath }

    @inline(__always) private func value() {
        precondition(node.count == 0, "A single value container can encode only one value")
        node.count = 1
    }

    mutating func encodeNil() throws { value(); writer.packNil() }
    mutating func encode(_ value: Bool) throws { self.value(); writer.packBool(value) }
    mutating func encode(_ value: String) throws { self.value(); writer.packString(value) }
    mutating func encode(_ value: Double) throws { self.value(); writer.packDouble(value) }
    mutating func encode(_ value: Float) throws { self.value(); writer.packFloat(value) }
    mutating func encode(_ value: Int) throws { self.value(); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int8) throws { self.value(); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int16) throws { self.value(); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int32) throws { self.value(); writer.packInt(Int64(value)) }
    mutating func encode(_ value: Int64) throws { self.value(); writer.packInt(value) }
    mutating func encode(_ value: UInt) throws { self.value(); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { self.value(); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { self.value(); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { self.value(); writer.packUInt(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { self.value(); writer.packUInt(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        self.value()
        // The value belongs to this node's own position: same parent, same key.
        try node.session.encodeValue(value, into: writer, parent: node.parent, key: node.key)
    }
}
