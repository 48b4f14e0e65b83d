/// What a keyed encoding container writes through: the value's encoder node (its entry count,
/// coding path and nested containers) and the writer its entries go to.
///
/// A class, not the container's own fields, because the encoding session re-points it at another
/// value when it hands its container out again (see ``KeptKeyedContainers``).
final class KeyedEncodingState: KeptContainerState {
    /// A strong reference to the value's node, which keeps it alive, and keeps the session from
    /// reusing it for another value, for as long as the state writes through it (a container a
    /// value kept beyond its `encode(to:)` included). The node in turn holds the writer strongly
    /// (the enclosing value's, or its own buffer) and changes it only when it is reused.
    @exclusivity(unchecked) private var heldNode: EncoderNode?
    // The same node, and its writer, used without a retain per entry written: reading a strong
    // reference out of a class's `var` retains and releases it around each use (the field could
    // change meanwhile), which for three fields cost more than the two metadata lookups a kept
    // container saves. Valid whenever `heldNode` is set; once the keeper lets go of it, no one but
    // the keeper refers to this state, and it re-points both before it hands the state out again.
    //
    // All three change only in `init`, `reuse` and `letGo`; the session calls the last two only
    // while nothing but its keeper refers to the container that writes through them, so no
    // access to them can overlap with that change, and none is checked at run time.
    @exclusivity(unchecked) private var node: Unmanaged<EncoderNode>
    @exclusivity(unchecked) private var writer: Unmanaged<MessagePackWriter>

    init(node: EncoderNode, writer: MessagePackWriter) {
        heldNode = node
        self.node = .passUnretained(node)
        self.writer = .passUnretained(writer)
    }

    /// Runs `body` with the value's node and writer, which the state keeps alive meanwhile.
    @inline(__always)
    func withNodeAndWriter<Result>(_ body: (EncoderNode, MessagePackWriter) throws -> Result) rethrows -> Result {
        try node._withUnsafeGuaranteedRef { node in try writer._withUnsafeGuaranteedRef { writer in try body(node, writer) } }
    }

    /// Makes this state, whose container nothing but the session's keeper refers to, the state
    /// of a container writing `node`'s value into `writer` (the node's).
    @inline(__always)
    func reuse(node: EncoderNode, writer: MessagePackWriter) {
        heldNode = node
        self.node = .passUnretained(node)
        self.writer = .passUnretained(writer)
    }

    /// Whether the state writes `owner`'s value (or wrote it, until it was let go of).
    @inline(__always)
    func isOwned(by owner: EncoderNode) -> Bool {
        node.toOpaque() == Unmanaged.passUnretained(owner).toOpaque()
    }

    /// Lets go of the value's node while the state waits to be reused, so that the node can be
    /// reused for the next value (the session reuses only nodes nothing refers to).
    func letGo() {
        heldNode = nil
    }
}
