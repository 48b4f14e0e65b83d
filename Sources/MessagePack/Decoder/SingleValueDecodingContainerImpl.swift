/// Reads one value.
struct SingleValueDecodingContainerImpl: SingleValueDecodingContainer {
    let object: ObjectRef
    let context: DecodingContext
    let path: CodingPathNode?

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }
    private var here: ObjectRef.Path { { CodingPathNode.path(path) } }

    func decodeNil() -> Bool { object.isNil }
    func decode(_ type: Bool.Type) throws -> Bool { try object.decodeBool(here) }
    func decode(_ type: String.Type) throws -> String { try object.decodeString(here) }
    func decode(_ type: Double.Type) throws -> Double { try object.decodeDouble(here) }
    func decode(_ type: Float.Type) throws -> Float { try object.decodeFloat(here) }
    func decode(_ type: Int.Type) throws -> Int { try object.decodeInteger(type, here) }
    func decode(_ type: Int8.Type) throws -> Int8 { try object.decodeInteger(type, here) }
    func decode(_ type: Int16.Type) throws -> Int16 { try object.decodeInteger(type, here) }
    func decode(_ type: Int32.Type) throws -> Int32 { try object.decodeInteger(type, here) }
    func decode(_ type: Int64.Type) throws -> Int64 { try object.decodeInteger(type, here) }
    func decode(_ type: UInt.Type) throws -> UInt { try object.decodeInteger(type, here) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try object.decodeInteger(type, here) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try object.decodeInteger(type, here) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try object.decodeInteger(type, here) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try object.decodeInteger(type, here) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try context.decodeValue(type, from: object, parent: path, key: nil)
    }
}
