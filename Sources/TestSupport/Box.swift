import Synchronization

/// How long any test waits for something that should happen promptly; generous for loaded CI
/// machines running the suites in parallel.
package let promptly: Duration = .seconds(10)

/// A value one thread sets and another reads after a hand-off (a semaphore, a join).
package final class Box<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    package init(_ value: Value) { storage = Mutex(value) }

    package var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
