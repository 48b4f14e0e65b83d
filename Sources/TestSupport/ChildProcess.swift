import Dispatch
import Foundation
import Glibc
import Synchronization
import SystemCalls

/// A child process of a test or of the benchmark: its stdout collected line by line, its stderr
/// kept in a file, and always reaped.
///
/// The one process harness of the package: the multi-process tests and `reactor-bench` both
/// start their `reactor-node`, `reactor-bench peer` and `python3` children through it.
///
/// - stdout is read by a thread of its own into whole lines, which ``waitForLine(timeout:where:)``
///   waits for with a deadline; ``output`` has every line so far.
/// - stderr goes to a file (``logPath``) that ``diagnostics`` and ``logTail(_:)`` quote in
///   failure messages; it is deleted with the value.
/// - ``waitForExit(timeout:)`` is bounded: past its deadline the child is killed (SIGKILL).
/// - Dropping the value kills a child still running and reaps it, so nothing is left behind.
///
/// Every spawn runs on one long-lived thread (``SpawnerThread``), so that a `launcher` that asks
/// for `PR_SET_PDEATHSIG` (the bench's `peer guard`) ties the child to the whole process rather
/// than to a pool thread the runtime may retire. Children stay in ``ChildRegistry`` until reaped,
/// so an interrupted program can stop them all.
package final class ChildProcess: Sendable {
    private struct State {
        var lines: [String] = []
        var partial: [UInt8] = []
        var stdoutClosed = false
        var exitStatus: Int32?
    }

    /// The state, apart from the value: the stdout reader holds this and not the value, so that
    /// dropping the value still kills and reaps a child that keeps its stdout open.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    /// What the child is called in failure messages.
    package let name: String
    /// The child's process id (the real program's, also when started through a `launcher`).
    package let pid: pid_t
    /// The file that collects the child's stderr.
    package let logPath: String
    private let shared = Shared()

    private static let spawned = Atomic<Int>(0)

    /// A launcher (see ``init(executable:arguments:name:launcher:environment:logDirectory:)``)
    /// that asks the kernel to SIGKILL the child when this process dies, whatever way it dies (a
    /// crashed test process cannot reap): util-linux's `setpriv --pdeathsig`, which `exec`s the
    /// program in place, so the pid stays the program's. Empty where there is no `setpriv`.
    package static let parentDeathLauncher: [String] = {
        let setpriv = "/usr/bin/setpriv"
        return FileManager.default.isExecutableFile(atPath: setpriv) ? [setpriv, "--pdeathsig", "KILL", "--"] : []
    }()

    /// Starts `executable ARGS` (looked up in PATH when it has no slash).
    /// - Parameters:
    ///   - launcher: a command that `exec`s the rest of its arguments (`executable ARGS`), put in
    ///     front of them; the bench's `peer guard` arranges a death signal this way.
    ///   - environment: the child's whole environment; `nil` inherits this process's.
    ///   - logDirectory: where the stderr file goes; the temporary directory by default.
    package init(executable: String, arguments: [String], name: String, launcher: [String] = [],
                 environment: [String: String]? = nil, logDirectory: String? = nil) throws {
        let directory = logDirectory ?? NSTemporaryDirectory()
        let safeName = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "-" })
        let logPath = (directory.hasSuffix("/") ? directory : directory + "/")
            + "\(safeName)-\(getpid())-\(Self.spawned.add(1, ordering: .relaxed).newValue).stderr"
        let command = launcher + [executable] + arguments
        let environmentLines = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        let outcome = SpawnerThread.shared.run { Self.posixSpawn(command, environment: environmentLines, stderrPath: logPath) }
        let (pid, readEnd) = try outcome.get()
        self.name = name
        self.pid = pid
        self.logPath = logPath
        ChildRegistry.shared.add(pid)
        let shared = shared
        Thread.detachNewThread { Self.readStdout(readEnd, into: shared) }
    }

    private static func posixSpawn(_ arguments: [String], environment: [String]?, stderrPath: String) -> Result<(pid_t, Int32), ChildProcessError> {
        var fds: [Int32] = [0, 0]
        // Only this thread spawns, so no other child can inherit the pipe before CLOEXEC is set.
        guard pipe(&fds) == 0 else { return .failure(ChildProcessError("pipe: \(String(cString: strerror(errno)))")) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Children start with default signal handling, whatever this process ignores or blocks.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { $0.map { strdup($0) } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let status = envp.map { envp in posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp) }
            ?? posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(fds[1])
        guard status == 0 else {
            close(fds[0])
            return .failure(ChildProcessError("\(arguments[0]): \(String(cString: strerror(status)))"))
        }
        return .success((pid, fds[0]))
    }

    private static func readStdout(_ descriptor: Int32, into shared: Shared) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let result = retryingInterrupts("read") { buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) } }
            guard case .success(let count) = result, count > 0 else { break }
            shared.state.withLock { state in
                state.partial += buffer[0..<count]
                var start = 0
                for index in state.partial.indices where state.partial[index] == 10 {
                    state.lines.append(String(decoding: state.partial[start..<index], as: UTF8.self))
                    start = index + 1
                }
                state.partial.removeFirst(start)
            }
        }
        close(descriptor)
        shared.state.withLock { state in
            if !state.partial.isEmpty { state.lines.append(String(decoding: state.partial, as: UTF8.self)) }
            state.partial = []
            state.stdoutClosed = true
        }
    }

    // MARK: Output

    /// The stdout lines so far.
    package var output: [String] { shared.state.withLock { $0.lines } }

    /// Whether stdout reached its end (every line the child wrote is in ``output``).
    package var isStdoutClosed: Bool { shared.state.withLock { $0.stdoutClosed } }

    /// Waits for the first stdout line matching `predicate`; `nil` when stdout ends or the
    /// deadline passes first.
    package func waitForLine(timeout: Duration = .seconds(15), where predicate: (String) -> Bool = { _ in true }) async -> String? {
        let deadline = ContinuousClock.now + timeout
        var checked = 0
        while true {
            let (lines, closed) = shared.state.withLock { ($0.lines, $0.stdoutClosed) }
            if let line = lines[checked...].first(where: predicate) { return line }
            checked = lines.count
            if closed || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The last `count` lines of stderr, each prefixed with the child's name.
    package func logTail(_ count: Int = 20) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let tail = text.split(separator: "\n").suffix(count)
        return tail.isEmpty ? "(\(name) wrote nothing to stderr)" : tail.map { "  \(name): \($0)" }.joined(separator: "\n")
    }

    /// The last 40 lines of stderr under a heading, for failure messages.
    package var diagnostics: String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return "\n--- \(name) stderr ---\n" + text.split(separator: "\n").suffix(40).joined(separator: "\n")
    }

    // MARK: Lifetime

    /// Sends a signal (nothing once reaped: the pid may belong to another process by then).
    package func signal(_ number: Int32) {
        shared.state.withLock { state in
            if state.exitStatus == nil { kill(pid, number) }
        }
    }

    /// Whether the child has not ended yet.
    package var isRunning: Bool { reap() == nil }

    /// The exit status once the child ended (128 + the signal when a signal ended it), reaping
    /// it; `nil` while it runs.
    @discardableResult
    package func reap() -> Int32? {
        shared.state.withLock { state in
            if let status = state.exitStatus { return status }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            guard result == pid || (result < 0 && errno == ECHILD) else { return nil }
            let status: Int32 = result < 0 ? -1 : ((raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f))
            state.exitStatus = status
            ChildRegistry.shared.remove(pid)
            return status
        }
    }

    /// Waits up to `timeout` for the child to end, then up to 5 s for the rest of its stdout;
    /// kills it (SIGKILL) when it does not end in time. Returns its status, or `nil` when it
    /// had to be killed.
    @discardableResult
    package func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        var status: Int32?
        while status == nil && ContinuousClock.now < deadline {
            status = reap()
            if status == nil { try? await Task.sleep(for: .milliseconds(10)) }
        }
        guard let status else {
            kill(pid, SIGKILL)
            while reap() == nil { try? await Task.sleep(for: .milliseconds(5)) }
            return nil
        }
        // A grandchild may hold the pipe open; the wait for the last lines is bounded.
        let drained = ContinuousClock.now + .seconds(5)
        while !isStdoutClosed && ContinuousClock.now < drained { try? await Task.sleep(for: .milliseconds(5)) }
        return status
    }

    /// SIGTERM, then up to `grace` to end, then SIGKILL; always reaped afterwards.
    package func stop(grace: Duration = .seconds(5)) async {
        guard isRunning else { return }
        signal(SIGTERM)
        await waitForExit(timeout: grace)
    }

    deinit {
        if shared.state.withLock({ $0.exitStatus == nil }) {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            _ = retryingInterrupts("waitpid") { waitpid(pid, &raw, 0) }
            ChildRegistry.shared.remove(pid)
        }
        unlink(logPath)
    }
}

/// Why a child could not be started.
package struct ChildProcessError: Error, CustomStringConvertible {
    /// The failed call and its reason.
    package let description: String

    init(_ description: String) { self.description = description }
}
