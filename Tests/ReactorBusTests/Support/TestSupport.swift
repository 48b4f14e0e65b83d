import Synchronization

/// How long any test waits for something that should happen promptly; generous for loaded CI machines.
let promptly: Duration = .seconds(10)

/// A value one thread sets and another reads after a semaphore hand-off.
final class Box<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
