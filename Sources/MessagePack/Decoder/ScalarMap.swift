import CMsgPack

/// Decodes maps into `[String: V]` and `[Int: V]` whose value is a `String`, `Int`, `Double` or
/// `Bool`, in code specialised for each pair: a large state is often one such dictionary (the
/// `catalog` app's is `[Int: String]` of 945,195 entries at 64 MiB), and building it through
/// the generic `Dictionary<Key, Value>` the decoder otherwise reaches hashes, inserts and moves
/// every entry through value witnesses.
///
/// Same results and errors as the generic form in ``DecodableDictionary``: keys are read first
/// (a key that is not a string, or not an integer or a string holding one, throws at the key's
/// position), then the value through the same scalar conversions the decoder uses (errors at
/// the key's coding path), then a duplicate key throws `dataCorrupted` at the map's path.
enum ScalarMap {
    /// The dictionary if `D` is one of the specialised pairs, else `nil`. `object` is a map.
    static func decode<D>(_ type: D.Type, from object: ObjectRef, node: CodingPathNode?, stringKeys: Bool) throws -> D? {
        if stringKeys {
            if D.self == [String: String].self { return unsafeBitCast(try entries(object, node, stringKey, MessagePackKey.string, string), to: D.self) }
            if D.self == [String: Int].self { return unsafeBitCast(try entries(object, node, stringKey, MessagePackKey.string, int), to: D.self) }
            if D.self == [String: Double].self { return unsafeBitCast(try entries(object, node, stringKey, MessagePackKey.string, double), to: D.self) }
            if D.self == [String: Bool].self { return unsafeBitCast(try entries(object, node, stringKey, MessagePackKey.string, bool), to: D.self) }
        } else {
            if D.self == [Int: String].self { return unsafeBitCast(try entries(object, node, intKey, MessagePackKey.index, string), to: D.self) }
            if D.self == [Int: Int].self { return unsafeBitCast(try entries(object, node, intKey, MessagePackKey.index, int), to: D.self) }
            if D.self == [Int: Double].self { return unsafeBitCast(try entries(object, node, intKey, MessagePackKey.index, double), to: D.self) }
            if D.self == [Int: Bool].self { return unsafeBitCast(try entries(object, node, intKey, MessagePackKey.index, bool), to: D.self) }
        }
        return nil
    }

    /// An integer key, or a string holding one (JSON objects only have string keys).
    static func integerKey(_ object: ObjectRef, _ path: ObjectRef.Path) throws -> Int {
        if object.isString {
            guard let number = Int(try object.decodeString(path)) else {
                throw DecodingError.typeMismatch(Int.self, .init(
                    codingPath: path(), debugDescription: "Map key is a string that is not an integer."))
            }
            return number
        }
        return try object.decodeInteger(Int.self, path)
    }

    // MARK: Keys and values
    //
    // Each reads its object in two steps: a check of the wire type that handles the common case
    // without a coding path, then the decoder's own conversion with its path and errors. The
    // path closure captures the map's coding-path node, and a capture is a retain and a release
    // per entry: atomic operations that each waited for the stores of the string just built,
    // a quarter of the time of a large map.

    @inline(__always)
    private static func stringKey(_ object: ObjectRef, _ node: CodingPathNode?, _ position: Int) throws -> String {
        if object.isString, let name = object.validatedString { return name }
        return try object.decodeString { CodingPathNode.path(node, appending: MessagePackKey.index(position)) }
    }

    @inline(__always)
    private static func intKey(_ object: ObjectRef, _ node: CodingPathNode?, _ position: Int) throws -> Int {
        if object.type == MSGPACK_OBJECT_POSITIVE_INTEGER, let number = Int(exactly: object.unsigned) { return number }
        if object.type == MSGPACK_OBJECT_NEGATIVE_INTEGER, let number = Int(exactly: object.signed) { return number }
        return try integerKey(object) { CodingPathNode.path(node, appending: MessagePackKey.index(position)) }
    }

    @inline(__always)
    private static func string(_ object: ObjectRef, _ path: () -> [any CodingKey]) throws -> String {
        if object.isString, let value = object.validatedString { return value }
        return try object.decodeString(path)
    }

    @inline(__always)
    private static func int(_ object: ObjectRef, _ path: () -> [any CodingKey]) throws -> Int {
        if object.type == MSGPACK_OBJECT_POSITIVE_INTEGER, let number = Int(exactly: object.unsigned) { return number }
        if object.type == MSGPACK_OBJECT_NEGATIVE_INTEGER, let number = Int(exactly: object.signed) { return number }
        return try object.decodeInteger(Int.self, path)
    }

    @inline(__always)
    private static func double(_ object: ObjectRef, _ path: () -> [any CodingKey]) throws -> Double {
        if object.type == MSGPACK_OBJECT_FLOAT64 || object.type == MSGPACK_OBJECT_FLOAT32 { return object.double }
        return try object.decodeDouble(path)
    }

    @inline(__always)
    private static func bool(_ object: ObjectRef, _ path: () -> [any CodingKey]) throws -> Bool {
        if object.type == MSGPACK_OBJECT_BOOLEAN { return object.boolean }
        return try object.decodeBool(path)
    }

    /// The map's entries; called with concrete `K` and `V`, so specialised for them. `codingKey`
    /// names a key in a coding path, built only for an error.
    @inline(__always)
    private static func entries<K: Hashable, V>(
        _ object: ObjectRef, _ node: CodingPathNode?,
        _ readKey: (ObjectRef, CodingPathNode?, Int) throws -> K,
        _ codingKey: @escaping (K) -> MessagePackKey,
        _ readValue: (ObjectRef, () -> [any CodingKey]) throws -> V
    ) throws -> [K: V] {
        let count = object.mapCount
        var result: [K: V] = [:]
        result.reserveCapacity(count)
        for position in 0 ..< count {
            let key = try readKey(object.key(position), node, position)
            // Inserted through the subscript, which takes the value over: `updateValue` kept a
            // copy (a retain and a release of each new string). A duplicate key leaves the count.
            let before = result.count
            result[key] = try readValue(object.value(position)) { CodingPathNode.path(node, appending: codingKey(key)) }
            guard result.count > before else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: CodingPathNode.path(node), debugDescription: "Duplicate map key \(codingKey(key).stringValue)."))
            }
        }
        return result
    }
}
