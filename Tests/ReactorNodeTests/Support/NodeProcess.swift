import Foundation
import Synchronization
import Testing

/// A child process of the test (the real `reactor-node`, or `python3`), always reaped.
///
/// stdout is collected line by line for the test to read with a deadline; stderr goes to a
/// temporary file that ``diagnostics`` returns, for failure messages. Dropping the value kills
/// the child (SIGKILL) and waits for it, so no test leaves a process behind.
final class NodeProcess {
    /// Collects stdout lines from the pipe's reader thread.
    private final class LineCollector: Sendable {
        private let state = Mutex<(lines: [String], partial: [UInt8])>(([], []))

        func append(_ data: Data) {
            state.withLock { state in
                state.partial += data
                while let newline = state.partial.firstIndex(of: 10) {
                    state.lines.append(String(decoding: state.partial[..<newline], as: UTF8.self))
                    state.partial.removeSubrange(...newline)
                }
            }
        }

        var lines: [String] { state.withLock { $0.lines } }

        private let ended = Atomic<Bool>(false)
        /// Marks the end of stdout (the pipe reached end of file).
        func end() { ended.store(true, ordering: .releasing) }
        /// Whether every line the child wrote has been collected.
        var isEnded: Bool { ended.load(ordering: .acquiring) }
    }

    private let process = Process()
    private let collector = LineCollector()
    private let stderrPath: String
    let name: String

    /// The reactor-node binary built next to the test bundle.
    static var reactorNode: String {
        let directory = Bundle.main.bundleURL.deletingLastPathComponent().path
        let candidates = [directory + "/reactor-node", directory + "/debug/reactor-node", FileManager.default.currentDirectoryPath + "/.build/debug/reactor-node"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }

    /// The package root (for examples/ and scripts/).
    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Starts `reactor-node ARGS`.
    convenience init(node arguments: [String], name: String? = nil, environment: [String: String] = [:]) throws {
        try self.init(executable: Self.reactorNode, arguments: arguments, name: name ?? arguments.first ?? "node", environment: environment)
    }

    /// Starts any executable.
    init(executable: String, arguments: [String], name: String, environment: [String: String] = [:]) throws {
        self.name = name
        stderrPath = NSTemporaryDirectory() + "reactorbus-\(name)-\(UUID().uuidString).stderr"
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REACTOR_") }
        env.merge(environment) { $1 }
        process.environment = env
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardInput = FileHandle.nullDevice
        stdout.fileHandleForReading.readabilityHandler = { [collector] handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                collector.end()
                return
            }
            collector.append(data)
        }
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: stderrPath)
    }

    /// The process id.
    var pid: Int32 { process.processIdentifier }

    /// Lines written to stdout so far.
    var output: [String] { collector.lines }

    /// Waits until stdout has a line matching `predicate`, or the deadline.
    func waitForLine(timeout: Duration = .seconds(15), where predicate: (String) -> Bool = { _ in true }) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = output.first(where: predicate) { return line }
            if !process.isRunning {
                // Let the reader thread hand over the last lines.
                try? await Task.sleep(for: .milliseconds(100))
                return output.first(where: predicate)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// The bound endpoints an authority printed on start.
    func endpoints(timeout: Duration = .seconds(15)) async throws -> (actions: String, workers: String, feed: String) {
        let line = try #require(await waitForLine(timeout: timeout) { $0.hasPrefix("{\"actions\"") }, "authority printed no endpoints: \(diagnostics)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        return (try #require(object["actions"]), try #require(object["workers"]), try #require(object["feed"]))
    }

    /// Sends a signal.
    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the exit status, at most `timeout`; kills the process when it does not exit.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        // The reader thread may still hold the last lines (a summary printed just before exit):
        // wait, bounded, for the end of stdout so that `output` is complete.
        let drained = ContinuousClock.now + .seconds(5)
        while !collector.isEnded && ContinuousClock.now < drained {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return process.terminationStatus
    }

    /// Whether the child is still running.
    var isRunning: Bool { process.isRunning }

    /// The tail of stderr, for failure messages.
    var diagnostics: String {
        let text = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return "\n--- \(name) stderr ---\n" + text.split(separator: "\n").suffix(40).joined(separator: "\n")
    }
}
