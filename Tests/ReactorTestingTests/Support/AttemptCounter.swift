import Synchronization

/// Counts attempts across the tasks an effect runner runs them in.
final class AttemptCounter: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    /// Adds one and returns the new count.
    func increment() -> Int {
        count.withLock { value in
            value += 1
            return value
        }
    }
}
