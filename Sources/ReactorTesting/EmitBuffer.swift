import Synchronization

/// Collects the emits of one effect run (the runner calls its sink from the effect's task).
final class EmitBuffer<Mutation: Sendable>: Sendable {
    private let emits = Mutex<[(index: UInt32, mutation: Mutation)]>([])

    func append(_ index: UInt32, _ mutation: Mutation) {
        emits.withLock { $0.append((index, mutation)) }
    }

    /// Every emit so far, in arrival order (retried attempts repeat their indices).
    var all: [(index: UInt32, mutation: Mutation)] { emits.withLock { $0 } }
}
