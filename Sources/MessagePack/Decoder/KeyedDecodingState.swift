/// What a keyed decoding container reads: the map, its coding path and, for large maps, the key
/// index; and where the next key is likely to be.
///
/// A class because the container's lookups are non-mutating while `nextPosition` changes with
/// each key found, and because the decoding context re-points it at another map when it hands
/// its container out again (see ``KeptKeyedContainers``).
final class KeyedDecodingState: KeptContainerState {
    let context: DecodingContext
    // These change only in `reuse` and `letGo`, which the context calls only while nothing but
    // its keeper refers to the container that reads them, so no access to them can overlap with
    // that change; without `@exclusivity(unchecked)` every lookup would check each read.
    @exclusivity(unchecked) private(set) var map: ObjectRef
    @exclusivity(unchecked) private(set) var path: CodingPathNode?
    @exclusivity(unchecked) private(set) var index: MapKeyIndex?
    /// The entry after the one found last (see `KeyedDecodingContainerImpl.position(ofUTF8:)`).
    var nextPosition = 0

    init(context: DecodingContext, map: ObjectRef, path: CodingPathNode?, index: MapKeyIndex?) {
        self.context = context
        self.map = map
        self.path = path
        self.index = index
    }

    /// Makes this state, whose container nothing but the context's keeper refers to, the state
    /// of a container reading `map`.
    func reuse(map: ObjectRef, path: CodingPathNode?, index: MapKeyIndex?) {
        self.map = map
        self.path = path
        // Only indexed (large) maps have an index: checked first, a struct's container copies
        // and destroys no index, each a call.
        if index != nil || self.index != nil { self.index = index }
        nextPosition = 0
    }

    /// Whether the state reads the value at `owner` (a coding path link): what
    /// ``KeptKeyedContainers`` lets go of once the value is done.
    @inline(__always)
    func isOwned(by owner: CodingPathNode) -> Bool { path === owner }

    /// Lets go of the value's coding path link and index while the state waits to be reused.
    func letGo() {
        path = nil
        if index != nil { index = nil }
    }

    /// Maps up to this many entries are searched linearly.
    static var linearSearchLimit: Int { 16 }

    /// Checks that `map` is a map whose keys a container keyed by `Key` can read, and indexes
    /// large maps.
    @inline(__always)
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
