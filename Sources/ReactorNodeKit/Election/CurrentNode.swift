import ReactorBus
import ReactorCore
import Synchronization

/// The node an elected authority runs now (it starts a new one each time it follows another
/// primary), so that the metrics endpoint reads the live one.
final class CurrentNode<R: Reactor>: Sendable {
    private let node = Mutex<AuthorityNode<R>?>(nil)

    init() {}

    /// Makes `node` the current one.
    func set(_ node: AuthorityNode<R>) {
        self.node.withLock { $0 = node }
    }

    /// The current node's metrics, if there is one.
    var metrics: AuthorityMetrics? { node.withLock { $0 }?.metrics }
}
