import Foundation
import Testing
import TestSupport

/// How the tests start their children with the package's one harness (``ChildProcess``): the
/// `reactor-node` and `reactor-bench` built next to the test bundle, or any other program, each
/// with this process's environment minus the `REACTOR_*` variables (the CLI reads options from
/// them, and a developer's shell must not change what a test runs).
extension ChildProcess {
    /// The reactor-node binary built next to the test bundle.
    static var reactorNode: String { built("reactor-node") }

    /// The reactor-bench binary built next to the test bundle.
    static var reactorBench: String { built("reactor-bench") }

    /// The schema-fixture binary: a node program of the "tally" app, release 1 or (with
    /// `REACTOR_FIXTURE_RELEASE=2`) release 2.
    static var schemaFixture: String { built("schema-fixture") }

    private static func built(_ product: String) -> String {
        let directory = Bundle.main.bundleURL.deletingLastPathComponent().path
        let candidates = [directory + "/" + product, directory + "/debug/" + product, FileManager.default.currentDirectoryPath + "/.build/debug/" + product]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }

    /// The package root (for examples/ and scripts/).
    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Starts `reactor-node ARGS`, with `environment` added to the test's.
    static func node(_ arguments: [String], name: String? = nil, environment: [String: String] = [:]) throws -> ChildProcess {
        try program(executable: reactorNode, arguments: arguments, name: name ?? arguments.first ?? "node", environment: environment)
    }

    /// Starts any executable, with `environment` added to the test's.
    static func program(executable: String, arguments: [String], name: String, environment: [String: String] = [:]) throws -> ChildProcess {
        var inherited = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REACTOR_") }
        inherited.merge(environment) { $1 }
        // Killed by the kernel should this test process die without reaping it (a crash).
        return try ChildProcess(executable: executable, arguments: arguments, name: name, launcher: parentDeathLauncher, environment: inherited)
    }

    /// The bound endpoints an authority printed on start.
    func endpoints(timeout: Duration = .seconds(15)) async throws -> (actions: String, workers: String, feed: String) {
        let line = try #require(await waitForLine(timeout: timeout) { $0.hasPrefix("{\"actions\"") }, "authority printed no endpoints: \(diagnostics)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        return (try #require(object["actions"]), try #require(object["workers"]), try #require(object["feed"]))
    }
}
