import Foundation
@testable import ReactorBus
import ReactorLog
import Synchronization

/// An ipc endpoint of its own under the temporary directory: `name` and a random suffix.
func ipcEndpoint(_ name: String) -> String {
    "ipc://" + NSTemporaryDirectory() + "\(name)-\(UUID().uuidString.prefix(8))"
}

extension AuthorityConfiguration {
    /// `app`'s authority on ipc endpoints of its own (`name`-...-actions, -workers, -feed).
    static func onIPC(app: String, name: String) -> AuthorityConfiguration {
        let base = ipcEndpoint(name)
        return AuthorityConfiguration(appName: app, actionsEndpoint: base + "-actions", workersEndpoint: base + "-workers", feedEndpoint: base + "-feed")
    }

    /// The counter's authority on ipc endpoints of its own, with a data directory and
    /// `replication` (a primary's, a standby's, or none), heartbeats every 200 ms: the nodes of
    /// the promotion and rejoin tests.
    static func replicatedCounter(_ name: String, data: String, replication: ReplicationConfiguration?) -> AuthorityConfiguration {
        var configuration = AuthorityConfiguration.onIPC(app: "counter", name: name)
        configuration.persistence = PersistenceConfiguration(directory: data)
        configuration.replication = replication
        configuration.heartbeatInterval = .milliseconds(200)
        return configuration
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

/// The lines a logger under test wrote, in order.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    /// A logger at `level` whose lines land here.
    func logger(_ label: String, level: LogLevel = .info) -> Logger {
        Logger(label: label, level: level, sink: .capture { [self] line in append(line) })
    }

    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
    func containing(_ text: String) -> [String] { all.filter { $0.contains(text) } }
}
