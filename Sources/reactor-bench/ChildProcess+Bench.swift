import Glibc
import MessagePack
import TestSupport

/// How the bench starts its children, and reads the JSON events they print.
///
/// Every child is started through `reactor-bench peer guard`, which asks the kernel to send it
/// SIGTERM if the bench dies (`PR_SET_PDEATHSIG`) and then `exec`s the real program, so the pid
/// is the real program's (its memory can be read from `/proc/PID/status`). Stderr files go to
/// the run directory.
extension ChildProcess {
    /// Starts `reactor-node ARGS` (an authority or a worker).
    static func reactorNode(_ arguments: [String], name: String) throws -> ChildProcess {
        try spawn(executable: BenchPaths.reactorNode, arguments: arguments, name: name)
    }

    /// Starts `reactor-bench peer ARGS` (this very binary, in one of its peer roles).
    static func peer(_ arguments: [String], name: String) throws -> ChildProcess {
        try spawn(executable: BenchPaths.benchBinary, arguments: ["peer"] + arguments, name: name)
    }

    /// Starts `executable ARGS` (looked up in PATH when it has no slash) under the guard.
    static func spawn(executable: String, arguments: [String], name: String) throws -> ChildProcess {
        do {
            return try ChildProcess(executable: executable, arguments: arguments, name: name,
                                    launcher: [BenchPaths.benchBinary, "peer", "guard", "--parent", String(getpid()), "--"],
                                    logDirectory: BenchPaths.runDirectory)
        } catch {
            throw BenchError.spawn(String(describing: error))
        }
    }

    /// Waits for the first stdout line that is a JSON object whose `event` is `event`; `nil` if
    /// the child closes stdout or the deadline passes first.
    func waitForEvent(_ event: String, timeout: Duration) async -> MessagePackValue? {
        await waitForJSON(timeout: timeout) { $0["event"]?.stringValue == event }
    }

    /// Waits for the first stdout line that is JSON and satisfies `predicate`.
    func waitForJSON(timeout: Duration, where predicate: (MessagePackValue) -> Bool) async -> MessagePackValue? {
        let line = await waitForLine(timeout: timeout) { line in
            guard line.hasPrefix("{"), let json = MessagePackValue.parse(line) else { return false }
            return predicate(json)
        }
        return line.flatMap(MessagePackValue.parse)
    }

    /// Every JSON stdout line whose `event` is `event` so far.
    func events(_ event: String) -> [MessagePackValue] {
        output.compactMap { line in
            guard line.hasPrefix("{"), let json = MessagePackValue.parse(line), json["event"]?.stringValue == event else { return nil }
            return json
        }
    }
}
