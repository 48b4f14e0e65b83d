import Foundation

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
