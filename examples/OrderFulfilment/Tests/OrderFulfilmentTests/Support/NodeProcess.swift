import Foundation
import Synchronization

/// A child process of a test: its stdout collected line by line, its stderr in a file, and
/// always stopped and reaped (also when a test fails half-way: dropping the value kills it).
final class NodeProcess: Sendable {
    /// What failure messages call it.
    let name: String
    private let process: Process
    private let stderrPath: String
    private let lines = Lines()

    /// stdout so far: whole lines, the start of the next one, and whether it ended. A class of
    /// its own so that the pipe's reader holds it and not the process value.
    private final class Lines: Sendable {
        private let state = Mutex<(complete: [String], partial: Data, closed: Bool)>(([], Data(), false))

        func withLock<T>(_ body: (inout (complete: [String], partial: Data, closed: Bool)) -> T) -> T {
            state.withLock { body(&$0) }
        }
    }

    /// Starts `executable arguments` with this process's environment minus `REACTOR_*` (the node
    /// reads options from those, and a developer's shell must not change what a test runs).
    init(executable: String, arguments: [String], name: String) throws {
        self.name = name
        stderrPath = NSTemporaryDirectory() + "order-node-\(name)-\(UUID().uuidString).stderr"
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REACTOR_") }
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        let stdout = Pipe()
        process.standardOutput = stdout
        let lines = self.lines
        stdout.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            lines.withLock { state in
                guard !data.isEmpty else {
                    if !state.partial.isEmpty { state.complete.append(String(decoding: state.partial, as: UTF8.self)) }
                    state.partial = Data()
                    state.closed = true
                    handle.readabilityHandler = nil
                    return
                }
                state.partial.append(data)
                while let newline = state.partial.firstIndex(of: 10) {
                    state.complete.append(String(decoding: state.partial[state.partial.startIndex ..< newline], as: UTF8.self))
                    state.partial = Data(state.partial[(newline + 1)...])
                }
            }
        }
        try process.run()
    }

    /// order-node, built next to this test bundle (the test target depends on it).
    static func orderNode(_ arguments: [String], name: String? = nil) throws -> NodeProcess {
        let directory = Bundle.main.bundleURL.deletingLastPathComponent().path
        let candidates = [directory + "/order-node", directory + "/debug/order-node", Bundle.main.bundlePath + "/order-node"]
        let binary = candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
        return try NodeProcess(executable: binary, arguments: arguments, name: name ?? arguments.first ?? "order-node")
    }

    /// The stdout lines so far.
    var output: [String] { lines.withLock { $0.complete } }

    /// What the child wrote to stderr.
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// The last lines of stderr under a heading, for failure messages.
    var diagnostics: String { "\n--- \(name) stderr ---\n" + stderr.split(separator: "\n").suffix(30).joined(separator: "\n") }

    /// Waits for the first stdout line after the `skipping` first ones that matches `predicate`;
    /// `nil` when stdout ends or `timeout` passes first.
    func waitForLine(timeout: Duration = .seconds(30), skipping: Int = 0, where predicate: (String) -> Bool) async -> String? {
        let deadline = ContinuousClock.now + timeout
        var checked = skipping
        while true {
            let (complete, closed) = lines.withLock { ($0.complete, $0.closed) }
            if checked < complete.count, let line = complete[checked...].first(where: predicate) { return line }
            checked = max(checked, complete.count)
            if closed || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Sends `signal` while the child runs.
    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits up to `timeout` for the child to end and returns its exit status; past the deadline
    /// it is killed (SIGKILL) and the result is `nil`. A child ended by a signal gives 128 + it.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(30)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        // The rest of stdout, briefly.
        let drained = ContinuousClock.now + .seconds(5)
        while !lines.withLock({ $0.closed }) && ContinuousClock.now < drained { try? await Task.sleep(for: .milliseconds(5)) }
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: stderrPath)
    }
}
