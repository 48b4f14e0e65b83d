import CMsgPack

/// Key checks and, for large maps, a hash index from key to entry position.
///
/// A map decoded through a keyed container must have unique keys that are
/// strings, or integers the `CodingKey` type accepts via `init(intValue:)`.
/// Anything else is ambiguous or meaningless for a struct and is rejected.
struct MapKeyIndex {
    private var strings: [String: Int] = [:]
    private var integers: [Int: Int] = [:]

    /// The integer value of an integer key that fits in `Int`.
    static func integerKey(_ key: ObjectRef) -> Int? {
        if key.type == MSGPACK_OBJECT_POSITIVE_INTEGER { return Int(exactly: key.unsigned) }
        if key.type == MSGPACK_OBJECT_NEGATIVE_INTEGER { return Int(exactly: key.signed) }
        return nil
    }

    private static func failure(_ message: String, _ path: CodingPathNode?) -> DecodingError {
        .dataCorrupted(.init(codingPath: CodingPathNode.path(path), debugDescription: message))
    }

    private static func checkNonString<Key: CodingKey>(
        _ key: ObjectRef, position: Int, keyType: Key.Type, path: CodingPathNode?
    ) throws -> Int {
        guard let value = integerKey(key), Key(intValue: value) != nil else {
            throw failure("Map key #\(position) is \(key.kindDescription), not a string key of \(Key.self).", path)
        }
        return value
    }

    /// Validates a small map without allocating.
    ///
    /// Keys that are all strings (every struct's) are told apart in one pass by their length and
    /// first byte, as one bit of a 64-bit set; only a key whose bit an earlier key set is compared
    /// with each earlier key in full. Comparing every pair took about 150 instructions for a
    /// struct of three fields, a twentieth of decoding it.
    static func validateSmall<Key: CodingKey>(map: ObjectRef, keyType: Key.Type, path: CodingPathNode?) throws {
        var seen: UInt64 = 0
        for position in 0 ..< map.mapCount {
            let key = map.key(position)
            guard key.isString else { return try validateSmallPairwise(map: map, keyType: keyType, path: path) }
            let bytes = key.stringBytes
            let bit: UInt64 = 1 << UInt64(truncatingIfNeeded: (bytes.count &* 31 &+ Int(bytes.first ?? 0)) & 63)
            if seen & bit != 0 { try rejectEarlier(bytes, before: position, in: map, path: path) }
            seen |= bit
        }
    }

    /// Throws if a key of `map` before `position` is the string `bytes`.
    private static func rejectEarlier(_ bytes: UnsafeRawBufferPointer, before position: Int, in map: ObjectRef, path: CodingPathNode?) throws {
        for earlier in 0 ..< position where map.key(earlier).stringEquals(bytes) {
            throw failure("Duplicate map key \"\(String(decoding: bytes, as: UTF8.self))\".", path)
        }
    }

    /// Validates a small map with a key that is not a string, comparing every pair of keys.
    private static func validateSmallPairwise<Key: CodingKey>(map: ObjectRef, keyType: Key.Type, path: CodingPathNode?) throws {
        let count = map.mapCount
        for position in 0 ..< count {
            let key = map.key(position)
            if key.isString {
                try rejectEarlier(key.stringBytes, before: position, in: map, path: path)
            } else {
                let value = try checkNonString(key, position: position, keyType: keyType, path: path)
                for earlier in 0 ..< position where integerKey(map.key(earlier)) == value {
                    throw failure("Duplicate map key \(value).", path)
                }
            }
        }
    }

    /// Validates a large map and indexes its keys.
    init<Key: CodingKey>(map: ObjectRef, keyType: Key.Type, path: CodingPathNode?) throws {
        let count = map.mapCount
        strings.reserveCapacity(count)
        for position in 0 ..< count {
            let key = map.key(position)
            if key.isString {
                guard let name = key.validatedString else {
                    throw Self.failure("Map key #\(position) is not valid UTF-8.", path)
                }
                guard strings.updateValue(position, forKey: name) == nil else {
                    throw Self.failure("Duplicate map key \"\(name)\".", path)
                }
            } else {
                let value = try Self.checkNonString(key, position: position, keyType: keyType, path: path)
                guard integers.updateValue(position, forKey: value) == nil else {
                    throw Self.failure("Duplicate map key \(value).", path)
                }
            }
        }
    }

    func position<Key: CodingKey>(of key: Key) -> Int? {
        if let position = strings[key.stringValue] { return position }
        return key.intValue.flatMap { integers[$0] }
    }
}
