/// The `Encoder` handed to `encode(to:)` for one value.
///
/// A node encoded synchronously (the common case: a value of a keyed or unkeyed container, or
/// the root) writes its container straight into the enclosing writer: msgpack-c packs a
/// placeholder header (count 0) where the container starts, the entries follow, and
/// `complete()` replaces the placeholder with the header msgpack-c packs for the final count.
/// (MessagePack needs the count before the contents, and Codable only reveals it at the end.)
/// Up to 15 entries the two headers have the same length, so nothing moves; a longer header
/// shifts the contents once.
///
/// Nested containers and super-encoders may be filled in any order, even after later siblings,
/// so they get their own node and a pooled buffer, spliced in at their recorded position when
/// the parent completes.
///
/// A single-value container of a value encoded synchronously writes straight into the
/// enclosing writer as well, so wrapper types and raw-value enums cost no copy.
final class EncoderNode: Encoder {
    enum Kind { case empty, keyed, unkeyed, single, singleDirect }

    let session: EncodingSession
    /// Unowned: the parent keeps its deferred children in `deferred`, so a strong reference back
    /// would make a cycle and leak every node with a nested container (found by LeakSanitizer
    /// under fuzz-msgpack). A child never outlives the encode call that its parent belongs to.
    //
    // `parent`, `key` and `target` change only in `reuse`, called by the session for a node that
    // nothing else refers to, so no access to them can overlap with that change. Without
    // `@exclusivity(unchecked)` the compiler checks every access at run time (an existential's
    // copy or destroy could, for all it knows, reach the node), about a tenth of an encode.
    @exclusivity(unchecked) private(set) unowned var parent: EncoderNode?
    @exclusivity(unchecked) private var otherKey: (any CodingKey)?
    /// The position of an array element whose node is re-pointed from element to element
    /// (`reuse(elementIndex:)`), else -1. Kept apart from `otherKey`: assigning an existential
    /// goes through its type's value witnesses, about a twentieth of encoding a small struct when it
    /// was done per element.
    @exclusivity(unchecked) private var elementIndex = -1
    /// The key of this node's value in its parent (`nil` for the root).
    var key: (any CodingKey)? { elementIndex >= 0 ? MessagePackKey.index(elementIndex) : otherKey }
    /// The writer of the enclosing value, when this node's value is encoded synchronously.
    @exclusivity(unchecked) private var target: MessagePackWriter?
    /// The node's own buffer, when it is deferred (no `target`).
    private var buffer: MessagePackWriter?
    private(set) var kind: Kind = .empty
    /// Where the container's placeholder header starts in its writer.
    private var start = 0
    /// Entries (keyed), elements (unkeyed) or values (single) written so far.
    var count = 0
    /// Children whose bytes are spliced in at `offset` of the node's writer on completion.
    private var deferred: [(offset: Int, node: EncoderNode)] = []

    init(session: EncodingSession, parent: EncoderNode?, key: (any CodingKey)?, target: MessagePackWriter?) {
        self.session = session
        self.parent = parent
        self.otherKey = key
        self.target = target
    }

    /// Makes this node, whose value is complete and which nothing refers to any more, the
    /// encoder of another value: allocating and freeing one per value cost about a tenth of
    /// encoding a small struct.
    func reuse(parent: EncoderNode?, key: (any CodingKey)?, target: MessagePackWriter?) {
        self.parent = parent
        self.otherKey = key
        elementIndex = -1
        self.target = target
        kind = .empty
        start = 0
        count = 0
    }

    /// Makes this node, whose value is complete and which nothing refers to any more, the
    /// encoder of the element at `index` of the array it encoded an element of: same parent,
    /// same writer.
    func reuse(elementIndex index: Int) {
        elementIndex = index
        kind = .empty
        start = 0
        count = 0
    }

    /// Lets go of what the node referred to for its last value (its parent, key and writer)
    /// while it waits in the session's pool: a session its thread keeps holds its pool between
    /// calls, when the parent may be gone.
    func clear() {
        parent = nil
        otherKey = nil
        elementIndex = -1
        target = nil
        kind = .empty
    }

    /// Hands the buffer back for reuse once the node's bytes have been written.
    func takeBuffer() -> MessagePackWriter? {
        defer { buffer = nil }
        return buffer
    }

    // MARK: Encoder

    var codingPath: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node: EncoderNode? = self
        while let current = node {
            if let key = current.key { keys.append(key) }
            node = current.parent
        }
        return keys.reversed()
    }

    var userInfo: [CodingUserInfoKey: Any] { session.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        session.keyedContainer(Key.self, node: self, writer: becomeContainer(.keyed))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedEncodingContainerImpl(node: self, writer: becomeContainer(.unkeyed))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        if kind == .empty, let target {
            kind = .singleDirect
            return SingleValueEncodingContainerImpl(node: self, writer: target)
        }
        if kind == .singleDirect, let target {
            return SingleValueEncodingContainerImpl(node: self, writer: target)
        }
        return SingleValueEncodingContainerImpl(node: self, writer: becomeContainer(.single))
    }

    /// Switches the node to `newKind` (once) and returns the writer to write into.
    private func becomeContainer(_ newKind: Kind) -> MessagePackWriter {
        if kind == .empty {
            kind = newKind
            let writer = target ?? ownBuffer()
            start = writer.count
            switch newKind {
            case .keyed: writer.packMapHeader(0)
            case .unkeyed: writer.packArrayHeader(0)
            default: break
            }
            return writer
        }
        precondition(kind == newKind, "Requested a \(newKind) container after a \(kind) container for the same value")
        return target ?? ownBuffer()
    }

    private func ownBuffer() -> MessagePackWriter {
        if let buffer { return buffer }
        let writer = session.acquireWriter()
        buffer = writer
        return writer
    }

    // MARK: Deferred children

    /// A child node for a nested container or super-encoder, spliced in at the current position.
    func makeDeferredChild(key: any CodingKey) -> EncoderNode {
        let child = session.makeNode(parent: self, key: key, target: nil)
        let offset = (target ?? buffer)?.count ?? 0
        // Through a local (see `take`): no run-time exclusivity checks on `deferred`.
        var children = take(&deferred)
        children.append((offset, child))
        deferred = children
        return child
    }

    /// A child node for a nested container of the given kind.
    func makeDeferredContainer(_ kind: Kind, key: any CodingKey) -> (EncoderNode, MessagePackWriter) {
        let child = makeDeferredChild(key: key)
        return (child, child.becomeContainer(kind))
    }

    // MARK: Completing

    /// Completes this node's value in its writer (the enclosing one, or the node's own buffer
    /// when deferred): deferred children spliced in, the header with the final count.
    func complete() {
        switch kind {
        case .singleDirect:
            if count == 0, let target { target.packNil() }
            return
        case .empty:
            // A value that encoded nothing becomes an empty map, like JSONEncoder's `{}`.
            (target ?? ownBuffer()).packMapHeader(0)
            return
        case .single:
            if count == 0, deferred.isEmpty { ownBuffer().packNil() }
        case .keyed, .unkeyed:
            break
        }
        let writer = target ?? ownBuffer()
        if !deferred.isEmpty {
            // Last first, so that the offsets of the earlier ones stay where they were recorded.
            var children = take(&deferred)
            while var child = children.popLast() {
                child.node.complete()
                if let bytes = child.node.buffer { writer.insert(bytes, at: child.offset) }
                child.node.releaseChildren()
                session.recycle(&child.node)
            }
        }
        switch kind {
        case .keyed where count < 16: writer.replaceHeader(at: start, with: MessagePackWriter.fixMapHeaders[count])
        case .keyed: writer.replaceHeader(at: start, with: session.header(mapCount: count))
        case .unkeyed where count < 16: writer.replaceHeader(at: start, with: MessagePackWriter.fixArrayHeaders[count])
        case .unkeyed: writer.replaceHeader(at: start, with: session.header(arrayCount: count))
        default: break
        }
    }

    /// Lets go of the deferred children once their bytes are written (or the encode failed),
    /// returning their buffers to the pool for the next nested container of this encode call.
    func releaseChildren() {
        guard !deferred.isEmpty else { return }
        var children = take(&deferred)
        while var child = children.popLast()?.node {
            child.releaseChildren()
            session.recycle(&child)
        }
    }
}
