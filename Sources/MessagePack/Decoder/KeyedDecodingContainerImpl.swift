import CMsgPack

/// Reads a msgpack map as a struct-like keyed container.
///
/// Keys must be strings, or integers that `Key(intValue:)` accepts; duplicate
/// keys are rejected when the container is created. Small maps (the common
/// struct case) are searched linearly on the UTF-8 bytes, first after the key found last, which
/// beats hashing for a handful of keys; larger maps get a hash index.
struct KeyedDecodingContainerImpl<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// What the container reads through, unretained: the standard library's box copies the
    /// container out and destroys the copy for every key it decodes, and with a strong reference
    /// that was a retain and a release each time (through the type's value witnesses), about a
    /// twentieth of decoding a small struct. The decoding context keeps every state it makes
    /// alive until its call ends (see ``DecodingContext/keyedContainer(_:map:path:)``), and a
    /// container is only used within the call that made it (after it, the bytes it reads are
    /// gone too).
    private let unretainedState: Unmanaged<KeyedDecodingState>

    /// Runs `body` with the state, borrowed: reading it takes no retain.
    @inline(__always) private func withState<Result>(_ body: (KeyedDecodingState) throws -> Result) rethrows -> Result {
        try unretainedState._withUnsafeGuaranteedRef(body)
    }

    @inline(__always) var map: ObjectRef { withState { $0.map } }
    @inline(__always) var context: DecodingContext { withState { $0.context } }
    @inline(__always) var path: CodingPathNode? { withState { $0.path } }

    init(state: KeyedDecodingState) {
        unretainedState = .passUnretained(state)
    }

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }

    // A plain loop without closures or `reserveCapacity`: synthesized enum decoding asks for
    // `allKeys` of every value, twice, and in this unspecialised code each closure or
    // `reserveCapacity` costs a run-time metadata lookup (`Optional<Key>`, `Array<Key>`) and calls
    // through value witnesses, more than the keys themselves.
    //
    // A map whose only key is a string `Key` does not accept is what an enum's unknown case
    // looks like: the context notes it, so that the error Swift's synthesized decoding throws
    // next ("Invalid number of keys") can be replaced by one naming the case and the known ones.
    var allKeys: [Key] {
        let count = map.mapCount
        var keys: [Key] = []
        var unknown: String?
        for position in 0 ..< count {
            let key = map.key(position)
            if key.isString {
                guard let name = key.validatedString else { continue }
                if let found = Key(stringValue: name) { keys.append(found) } else { unknown = name }
            } else if let value = MapKeyIndex.integerKey(key), let found = Key(intValue: value) {
                keys.append(found)
            }
        }
        context.noteKeys(count == 1 ? unknown : nil, of: Key.self, at: path)
        return keys
    }

    // MARK: Lookup

    @inline(__always)
    private func find(_ key: Key) -> ObjectRef? {
        let map = self.map
        if let index = withState({ $0.index }) {
            return index.position(of: key).map { map.value($0) }
        }
        var name = key.stringValue
        if let found = name.withUTF8({ position(ofUTF8: UnsafeRawBufferPointer($0)) }) {
            return map.value(found)
        }
        if let intValue = key.intValue {
            for position in 0 ..< map.mapCount where MapKeyIndex.integerKey(map.key(position)) == intValue {
                return map.value(position)
            }
        }
        return nil
    }

    @inline(__always)
    private func position(ofUTF8 bytes: UnsafeRawBufferPointer) -> Int? {
        let map = self.map
        let count = map.mapCount
        // Synthesized decoding asks for the keys in the order the encoder wrote them: try the
        // entry after the last one found first, so a struct's lookups take one comparison each.
        return withState { state in
            let expected = state.nextPosition
            if expected < count, map.key(expected).stringEquals(bytes) {
                state.nextPosition = expected + 1
                return expected
            }
            for position in 0 ..< count where map.key(position).stringEquals(bytes) {
                state.nextPosition = position + 1
                return position
            }
            return nil
        }
    }

    @inline(__always)
    private func require(_ key: Key) throws -> ObjectRef {
        guard let object = find(key) else {
            throw DecodingError.keyNotFound(key, .init(
                codingPath: CodingPathNode.path(path), debugDescription: "No value for key \"\(key.stringValue)\"."))
        }
        return object
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { try require(key).isNil }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try require(key).decodeBool { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try require(key).decodeString { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try require(key).decodeDouble { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try require(key).decodeFloat { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try require(key).decodeInteger(type) { CodingPathNode.path(path, appending: key) } }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try context.decodeValue(type, from: require(key), parent: path, key: key)
    }

    // One lookup instead of the default contains + decodeNil + decode.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let object = find(key), !object.isNil else { return nil }
        return try context.decodeValue(type, from: object, parent: path, key: key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let object = find(key), !object.isNil else { return nil }
        return try object.decodeString { CodingPathNode.path(path, appending: key) }
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let object = find(key), !object.isNil else { return nil }
        return try object.decodeInteger(type) { CodingPathNode.path(path, appending: key) }
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let object = find(key), !object.isNil else { return nil }
        return try object.decodeBool { CodingPathNode.path(path, appending: key) }
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let object = find(key), !object.isNil else { return nil }
        return try object.decodeDouble { CodingPathNode.path(path, appending: key) }
    }

    // MARK: Nesting

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let node = CodingPathNode(parent: path, key: key)
        return try context.keyedContainer(NestedKey.self, map: require(key), path: node)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try UnkeyedDecodingContainerImpl(array: require(key), context: context, path: CodingPathNode(parent: path, key: key))
    }

    func superDecoder() throws -> any Decoder {
        var name = MessagePackKey.super.stringValue
        let found: Int? = name.withUTF8 { position(ofUTF8: UnsafeRawBufferPointer($0)) }
        let object = found.map { map.value($0) } ?? ObjectRef(NilObject.pointer)
        return DecoderImpl(object: object, context: context, path: CodingPathNode(parent: path, key: MessagePackKey.super))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        DecoderImpl(object: find(key) ?? ObjectRef(NilObject.pointer), context: context,
                    path: CodingPathNode(parent: path, key: key))
    }
}
