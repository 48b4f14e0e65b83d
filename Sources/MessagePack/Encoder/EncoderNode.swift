/// The `Encoder` handed to `encode(to:)` for one value.
///
/// A node collects its container's contents in a pooled writer and counts the
/// entries; `finish(into:)` then writes the msgpack-c map/array header with
/// that count followed by the collected bytes. (MessagePack needs the count
/// before the contents, and Codable only reveals it at the end.)
///
/// Nested containers and super-encoders may be filled in any order, even
/// after later siblings, so they get their own node which is spliced in at
/// its recorded position when the parent finishes.
///
/// A single-value container of a value encoded synchronously writes straight
/// into the parent's buffer, so wrapper types and raw-value enums cost no copy.
final class EncoderNode: Encoder {
    enum Kind { case empty, keyed, unkeyed, single, singleDirect }

    let session: EncodingSession
    /// Unowned: the parent keeps its deferred children in `deferred`, so a strong reference back
    /// would make a cycle and leak every node with a nested container (found by LeakSanitizer
    /// under fuzz-msgpack). A child never outlives the encode call that its parent belongs to.
    unowned let parent: EncoderNode?
    let key: (any CodingKey)?
    /// The writer of the enclosing value, when this node's value is encoded synchronously.
    private let target: MessagePackWriter?
    private var buffer: MessagePackWriter?
    private(set) var kind: Kind = .empty
    /// Entries (keyed), elements (unkeyed) or values (single) written so far.
    var count = 0
    /// Children whose bytes are spliced in at `offset` of `buffer` on finish.
    private var deferred: [(offset: Int, node: EncoderNode)] = []

    init(session: EncodingSession, parent: EncoderNode?, key: (any CodingKey)?, target: MessagePackWriter?) {
        self.session = session
        self.parent = parent
        self.key = key
        self.target = target
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
        KeyedEncodingContainer(KeyedEncodingContainerImpl<Key>(node: self, writer: becomeContainer(.keyed)))
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

    /// Switches the node to `newKind` (once) and returns the buffer to write into.
    private func becomeContainer(_ newKind: Kind) -> MessagePackWriter {
        if kind == .empty { kind = newKind }
        precondition(kind == newKind, "Requested a \(newKind) container after a \(kind) container for the same value")
        if let buffer { return buffer }
        let writer = session.acquireWriter()
        buffer = writer
        return writer
    }

    // MARK: Deferred children

    /// A child node for a nested container or super-encoder, spliced in at the current position.
    func makeDeferredChild(key: any CodingKey) -> EncoderNode {
        let child = EncoderNode(session: session, parent: self, key: key, target: nil)
        // Through a local (see `take`): no run-time exclusivity checks on `deferred`.
        var children = take(&deferred)
        children.append((buffer?.count ?? 0, child))
        deferred = children
        return child
    }

    /// A child node for a nested container of the given kind.
    func makeDeferredContainer(_ kind: Kind, key: any CodingKey) -> (EncoderNode, MessagePackWriter) {
        let child = makeDeferredChild(key: key)
        return (child, child.becomeContainer(kind))
    }

    // MARK: Finishing

    /// Writes this node's value to `writer`: header with the final count, then contents.
    func finish(into writer: MessagePackWriter) throws {
        switch kind {
        case .singleDirect:
            if count == 0 { writer.packNil() }
            return
        case .empty:
            // A value that encoded nothing becomes an empty map, like JSONEncoder's `{}`.
            writer.packMapHeader(0)
            return
        case .keyed:
            writer.packMapHeader(count)
        case .unkeyed:
            writer.packArrayHeader(count)
        case .single:
            if count == 0, deferred.isEmpty { writer.packNil() }
        }
        guard let buffer else { return }
        var position = 0
        for child in deferred {
            writer.appendEncoded(from: buffer, range: position ..< child.offset)
            try child.node.finish(into: writer)
            position = child.offset
        }
        writer.appendEncoded(from: buffer, range: position ..< buffer.count)
        releaseChildren()
    }

    /// Lets go of the deferred children once their bytes are written (or the encode failed),
    /// returning their buffers to the pool for the next nested container of this encode call.
    func releaseChildren() {
        var children = take(&deferred)
        while var child = children.popLast()?.node {
            child.releaseChildren()
            session.recycle(&child)
        }
    }
}
