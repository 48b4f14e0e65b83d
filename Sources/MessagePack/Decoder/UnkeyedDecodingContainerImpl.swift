import CMsgPack

/// Reads the elements of a msgpack array in order.
struct UnkeyedDecodingContainerImpl: UnkeyedDecodingContainer {
    let array: ObjectRef
    let context: DecodingContext
    let path: CodingPathNode?
    let count: Int?
    private(set) var currentIndex = 0

    init(array: ObjectRef, context: DecodingContext, path: CodingPathNode?) throws {
        guard array.isArray else {
            throw DecodingError.typeMismatch([Any].self, .init(
                codingPath: CodingPathNode.path(path),
                debugDescription: "Expected an array, found \(array.kindDescription)."))
        }
        self.array = array
        self.context = context
        self.path = path
        self.count = array.arrayCount
    }

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }
    var isAtEnd: Bool { currentIndex >= array.arrayCount }

    private var key: MessagePackKey { .index(currentIndex) }

    /// The next element; throws `valueNotFound` at the end.
    private mutating func next(_ type: Any.Type) throws -> (ObjectRef, ObjectRef.Path) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(
                codingPath: CodingPathNode.path(path, appending: key), debugDescription: "Unkeyed container is at end."))
        }
        let index = currentIndex
        currentIndex += 1
        let path = self.path
        return (array.element(index), { CodingPathNode.path(path, appending: MessagePackKey.index(index)) })
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any?.self, .init(
                codingPath: CodingPathNode.path(path, appending: key), debugDescription: "Unkeyed container is at end."))
        }
        guard array.element(currentIndex).isNil else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let (o, p) = try next(type); return try o.decodeBool(p) }
    mutating func decode(_ type: String.Type) throws -> String { let (o, p) = try next(type); return try o.decodeString(p) }
    mutating func decode(_ type: Double.Type) throws -> Double { let (o, p) = try next(type); return try o.decodeDouble(p) }
    mutating func decode(_ type: Float.Type) throws -> Float { let (o, p) = try next(type); return try o.decodeFloat(p) }
    mutating func decode(_ type: Int.Type) throws -> Int { let (o, p) = try next(type); return try o.decodeInteger(type, p) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let (o, p) = try next(type); return try o.decodeInteger(type, p) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let (o, p) = try next(type); return try o.decodeInteger(type, p) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let (o, p) = try next(type); return try o.decodeInteger(type, p) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let (o, p) = try next(type); return try o.decodeInteger(type, p) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let (o, p) = try next(type); return try o.decodeInteger(type, p) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (o, p) = try next(type); return try o.decodeInteger(type, p) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (o, p) = try next(type); return try o.decodeInteger(type, p) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (o, p) = try next(type); return try o.decodeInteger(type, p) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (o, p) = try next(type); return try o.decodeInteger(type, p) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let index = currentIndex
        let (object, _) = try next(type)
        return try context.decodeValue(type, from: object, parent: path, key: MessagePackKey.index(index))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let index = currentIndex
        let (object, _) = try next(KeyedDecodingContainer<NestedKey>.self)
        let node = CodingPathNode(parent: path, key: MessagePackKey.index(index))
        return try context.keyedContainer(NestedKey.self, map: object, path: node)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let index = currentIndex
        let (object, _) = try next((any UnkeyedDecodingContainer).self)
        let node = CodingPathNode(parent: path, key: MessagePackKey.index(index))
        return try UnkeyedDecodingContainerImpl(array: object, context: context, path: node)
    }

    mutating func superDecoder() throws -> any Decoder {
        let index = currentIndex
        let (object, _) = try next((any Decoder).self)
        return DecoderImpl(object: object, context: context, path: CodingPathNode(parent: path, key: MessagePackKey.index(index)))
    }
}
