/// The node and writer a keyed encoding container writes to.
///
/// A class so that one `KeyedEncodingContainer` (a box the standard library allocates, of a type
/// whose metadata the runtime looks up on every creation) can be lent out again for the next
/// value with the same key type: the session only changes what the state points to (see
/// `KeyedEncodingSlot`).
final class KeyedEncodingState {
    private var lentNode: EncoderNode?
    private var lentWriter: MessagePackWriter?

    /// Points the container at the entries of `node`, written to `writer`.
    func lend(node: EncoderNode, writer: MessagePackWriter) {
        lentNode = node
        lentWriter = writer
    }

    /// Lets go of the node (so that its buffer can be reused) once its value is complete.
    func clear() {
        lentNode = nil
        lentWriter = nil
    }

    var node: EncoderNode {
        guard let lentNode else { preconditionFailure("A keyed encoding container was used after its value was encoded") }
        return lentNode
    }

    var writer: MessagePackWriter {
        guard let lentWriter else { preconditionFailure("A keyed encoding container was used after its value was encoded") }
        return lentWriter
    }
}

/// A keyed encoding container kept by an encoding session for reuse, and whether it is lent out
/// (from the moment a node asks for it until that node's value is complete).
class KeyedEncodingSlot {
    let keyType: ObjectIdentifier
    let state: KeyedEncodingState
    var isLent = false {
        didSet { if !isLent { state.clear() } }
    }

    init(keyType: ObjectIdentifier, state: KeyedEncodingState) {
        self.keyType = keyType
        self.state = state
    }
}

/// The slot of one key type, holding the container to lend.
final class TypedKeyedEncodingSlot<Key: CodingKey>: KeyedEncodingSlot {
    let container: KeyedEncodingContainer<Key>

    init(state: KeyedEncodingState) {
        container = KeyedEncodingContainer(KeyedEncodingContainerImpl<Key>(state: state))
        super.init(keyType: ObjectIdentifier(Key.self), state: state)
    }
}
