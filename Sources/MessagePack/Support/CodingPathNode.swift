/// One link of a coding path, shared by all children of a container.
///
/// Coding paths are only materialised into `[CodingKey]` when asked for
/// (errors, `codingPath` calls), so building them costs one small object
/// per nested non-primitive value. The decoder reuses the link of a value once that value is
/// decoded and nothing refers to the link any more (see `DecodingContext.decodeValue`).
final class CodingPathNode {
    private(set) var parent: CodingPathNode?
    private(set) var key: any CodingKey

    init(parent: CodingPathNode?, key: any CodingKey) {
        self.parent = parent
        self.key = key
    }

    /// Makes this unreferenced link the link of another value.
    func reuse(parent: CodingPathNode?, key: any CodingKey) {
        self.parent = parent
        self.key = key
    }

    /// Makes this unreferenced link the link of a sibling: same parent, another key.
    func reuse(key: any CodingKey) {
        self.key = key
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
