/// What a keyed decoding container reads: the map, its coding path and, for large maps, the key
/// index.
///
/// A class so that one `KeyedDecodingContainer` (a box the standard library allocates, of a type
/// whose metadata the runtime looks up on every creation) can be handed out again for the next
/// value with the same key type: the decoding context only changes what the state points to (see
/// `KeyedDecodingSlot`). Looking up the two generic metadata and allocating the box cost about as
/// much as decoding a three-field struct.
final class KeyedDecodingState {
    let context: DecodingContext
    var map: ObjectRef
    var path: CodingPathNode?
    var index: MapKeyIndex?

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

/// A keyed decoding container kept by a decoding context for reuse, and whether it is lent out.
///
/// Lent out while the value whose decoder created it is being decoded (the context releases it
/// when that value's `init(from:)` returns, see `DecodingContext.decodeValue`); a value of the
/// same key type nested in it gets another slot.
class KeyedDecodingSlot {
    let keyType: ObjectIdentifier
    let state: KeyedDecodingState
    var isLent = false
    /// The slot lent out before this one (the context's lent slots form a stack).
    var below: KeyedDecodingSlot?

    init(keyType: ObjectIdentifier, state: KeyedDecodingState) {
        self.keyType = keyType
        self.state = state
    }
}

/// The slot of one key type, holding the container to hand out.
final class TypedKeyedDecodingSlot<Key: CodingKey>: KeyedDecodingSlot {
    let container: KeyedDecodingContainer<Key>

    init(state: KeyedDecodingState) {
        container = KeyedDecodingContainer(KeyedDecodingContainerImpl<Key>(state: state))
        super.init(keyType: ObjectIdentifier(Key.self), state: state)
    }
}
