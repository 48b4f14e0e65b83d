/// Misuse of a node's lifecycle.
public enum NodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `start()` was called on a node that was started before; nodes are started once.
    case alreadyStarted(String)

    public var description: String {
        switch self {
        case .alreadyStarted(let node): "the \(node) node was already started; create a new node to start again"
        }
    }
}
