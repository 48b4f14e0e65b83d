import CMsgPack

/// Lets the decoder read `[String: V]` and `[Int: V]` straight from a map in
/// one pass (with duplicate-key detection), instead of Swift's
/// `allKeys` + per-key lookup.
protocol DecodableDictionary {
    /// The decoded dictionary, or `nil` to let `init(from:)` handle this key type.
    static func decodeMessagePackMap(from object: ObjectRef, context: DecodingContext, node: CodingPathNode?) throws -> Self?
    /// Whether `decodeMessagePackMap` reads this key type (else it returns `nil`).
    static var hasDedicatedForm: Bool { get }
}

extension Dictionary: DecodableDictionary where Key: Decodable, Value: Decodable {
    static var hasDedicatedForm: Bool { Key.self == String.self || Key.self == Int.self }

    static func decodeMessagePackMap(
        from object: ObjectRef, context: DecodingContext, node: CodingPathNode?
    ) throws -> Self? {
        let isString = Key.self == String.self
        guard isString || Key.self == Int.self else { return nil }
        guard object.isMap else {
            throw DecodingError.typeMismatch(Self.self, .init(
                codingPath: CodingPathNode.path(node), debugDescription: "Expected a map, found \(object.kindDescription)."))
        }
        // This function runs unspecialised (the decoder reaches it through the protocol), so a
        // dictionary of a scalar value built here would hash, insert and copy through value
        // witnesses, about half of decoding a large one. Those of the common value types are
        // built by code specialised for them, with the same checks, errors and coding paths.
        if let dictionary = try ScalarMap.decode(Self.self, from: object, node: node, stringKeys: isString) {
            return dictionary
        }
        var result: [Key: Value] = [:]
        result.reserveCapacity(object.mapCount)
        for position in 0 ..< object.mapCount {
            let keyObject = object.key(position)
            let keyPath: ObjectRef.Path = { CodingPathNode.path(node, appending: MessagePackKey.index(position)) }
            let key: Key
            let codingKey: MessagePackKey
            if isString {
                let name = try keyObject.decodeString(keyPath)
                key = unsafeBitCast(name, to: Key.self)
                codingKey = .string(name)
            } else {
                let number = try ScalarMap.integerKey(keyObject, keyPath)
                key = unsafeBitCast(number, to: Key.self)
                codingKey = .index(number)
            }
            let value = try context.decodeValue(Value.self, from: object.value(position), parent: node, key: codingKey)
            guard result.updateValue(value, forKey: key) == nil else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: CodingPathNode.path(node), debugDescription: "Duplicate map key \(codingKey.stringValue)."))
            }
        }
        return result
    }
}
