/// What a keyed decoding container reads: the map, its coding path and, for large maps, the key
/// index; and where the next key is likely to be.
///
/// A class because the container's lookups are non-mutating while `nextPosition` changes with
/// each key found.
final class KeyedDecodingState {
    let context: DecodingContext
    let map: ObjectRef
    let path: CodingPathNode?
    let index: MapKeyIndex?
    /// The entry after the one found last (see `KeyedDecodingContainerImpl.position(ofUTF8:)`).
    var nextPosition = 0

    init(context: DecodingContext, map: ObjectRef, path: CodingPathNode?, index: MapKeyIndex?) {
        self.context = context
        self.map = map
        self.path = path
        self.index = index
    }

    /// Maps up to this many entries are searched linearly.
    static var linearSearchLimit: Int { 16 }

    /// Checks that `map` is a map whose keys a container keyed by `Key` can read, and indexes
    /// large maps.
    static func validate<Key: CodingKey>(map: ObjectRef, keyType: Key.Type, path: CodingPathNode?) throws -> MapKeyIndex? {
        guard map.isMap else {
            throw DecodingError.typeMismatch([String: Any].self, .init(
                codingPath: CodingPathNode.path(path), debugDescription: "Expected a map, found \(map.kindDescription)."))
        }
        if map.mapCount > linearSearchLimit {
            return try MapKeyIndex(map: map, keyType: Key.self, path: path)
        }
        try MapKeyIndex.validateSmall(map: map, keyType: Key.self, path: path)
        return nil
    }
}
