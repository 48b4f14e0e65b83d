import Synchronization

/// A node's counters as other threads see them: one value of the node's metrics type behind a lock.
///
/// The one way every node counts: its loop keeps the counters in a plain value on its own thread
/// and ``publish(_:)``es a copy after each turn (the authority, the client), or changes them in
/// place with ``update(_:)`` where counts happen off the loop or must be seen at once (a worker,
/// an observer's streams); readers take ``value``, a consistent copy.
final class NodeMetrics<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    /// Starts from `initial` (the metrics type's zero).
    init(_ initial: Value) {
        storage = Mutex(initial)
    }

    /// The values last published.
    var value: Value { storage.withLock { $0 } }

    /// Replaces the values with the loop's current ones.
    func publish(_ value: Value) {
        storage.withLock { $0 = value }
    }

    /// Changes the values under the lock.
    func update(_ body: (inout Value) -> Void) {
        storage.withLock { body(&$0) }
    }
}
