/// One link of a coding path, shared by all children of a container.
///
/// Coding paths are only materialised into `[CodingKey]` when asked for
/// (errors, `codingPath` calls), so building them costs one small object
/// per nested non-primitive value. The decoder reuses the link of a value once that value is
/// decoded and nothing refers to the link any more (see `DecodingContext.decodeValue`).
final class CodingPathNode {
    // These change only in `init`, `reuse` and `clear`, which the decoder calls only for a link
    // nothing else refers to, so no access can overlap with the change. Without
    // `@exclusivity(unchecked)` the link re-pointed at each element of an array checked its
    // access at run time, per element (about 60 instructions of a small struct's decode).
    @exclusivity(unchecked) private(set) var parent: CodingPathNode?
    @exclusivity(unchecked) private var otherKey: any CodingKey
    /// The position of an array element whose link is re-pointed from element to element
    /// (`reuse(elementIndex:)`), else -1. Kept apart from `otherKey`: assigning an existential
    /// goes through its type's value witnesses, per element.
    @exclusivity(unchecked) private var elementIndex = -1

    /// The key of this link's value in its parent.
    var key: any CodingKey { elementIndex >= 0 ? MessagePackKey.index(elementIndex) : otherKey }

    init(parent: CodingPathNode?, key: any CodingKey) {
        self.parent = parent
        self.otherKey = key
    }

    /// Makes this unreferenced link the link of another value.
    func reuse(parent: CodingPathNode?, key: any CodingKey) {
        self.parent = parent
        self.otherKey = key
        elementIndex = -1
    }

    /// Makes this unreferenced link the link of the element at `index` of the array whose
    /// element it was: same parent.
    func reuse(elementIndex index: Int) {
        elementIndex = index
    }

    /// Lets go of the parent while the link waits to be reused.
    func clear() {
        parent = nil
    }

    /// The path from the root to `node` (empty for the root).
    static func path(_ node: CodingPathNode?) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var current = node
        while let link = current {
            keys.append(link.key)
            current = link.parent
        }
        return keys.reversed()
    }

    /// The path from the root to `node`, followed by `key`.
    static func path(_ node: CodingPathNode?, appending key: any CodingKey) -> [any CodingKey] {
        path(node) + [key]
    }
}
