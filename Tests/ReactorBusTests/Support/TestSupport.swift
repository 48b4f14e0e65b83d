import Foundation
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

/// A fresh data directory under the temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let path = NSTemporaryDirectory() + "reactorbus-nodes-\(UUID().uuidString)"

    init() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var snapshots: String { path + "/snapshots" }

    /// The names in `directory`, sorted.
    static func list(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }
}
