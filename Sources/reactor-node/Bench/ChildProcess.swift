import Dispatch
import Foundation
import Glibc
import Synchronization

/// One process the bench started: its stdout read line by line, its stderr kept in a log file,
/// and always reaped.
///
/// Every child is started through `reactor-node bench-peer guard`, which asks the kernel to send
/// it SIGTERM if the bench dies (`PR_SET_PDEATHSIG`) and then `exec`s the real program, so the
/// pid here is the real program's (its memory can be read from `/proc/PID/status`). The death
/// signal follows the *thread* that spawned the child, so every spawn runs on one thread that
/// lives as long as the bench (``SpawnerThread``). Children are registered in ``ChildRegistry``
/// until reaped, which stops them all on SIGINT.
final class ChildProcess: Sendable {
    private struct State {
        var lines: [String] = []
        var partial: [UInt8] = []
        var stdoutClosed = false
        var exitStatus: Int32?
    }

    /// What the bench calls this child in progress lines and errors.
    let name: String
    /// The child's process id.
    let pid: pid_t
    /// The file that collects the child's stderr.
    let logPath: String
    private let state: Mutex<State>

    private init(name: String, pid: pid_t, logPath: String) {
        self.name = name
        self.pid = pid
        self.logPath = logPath
        self.state = Mutex(State())
    }

    private static let spawned = Atomic<Int>(0)

    /// Starts `reactor-node ARGS` (this very binary).
    static func reactorNode(_ arguments: [String], name: String) throws -> ChildProcess {
        try spawn(executable: BenchPaths.reactorNode, arguments: arguments, name: name)
    }

    /// Starts `executable ARGS` (looked up in PATH when it has no slash) under the guard.
    static func spawn(executable: String, arguments: [String], name: String) throws -> ChildProcess {
        let logPath = BenchPaths.temporaryFile("\(name)-\(spawned.add(1, ordering: .relaxed).newValue).stderr")
        let guarded = [BenchPaths.reactorNode, "bench-peer", "guard", "--parent", String(getpid()), "--", executable] + arguments
        let outcome = SpawnerThread.shared.run { Self.posixSpawn(guarded, stderrPath: logPath) }
        let (pid, readEnd) = try outcome.get()
        let child = ChildProcess(name: name, pid: pid, logPath: logPath)
        ChildRegistry.shared.add(pid)
        Thread.detachNewThread { child.readStdout(readEnd) }
        return child
    }

    private static func posixSpawn(_ arguments: [String], stderrPath: String) -> Result<(pid_t, Int32), BenchError> {
        var fds: [Int32] = [0, 0]
        // Only this thread spawns, so no other child can inherit the pipe before CLOEXEC is set.
        guard pipe(&fds) == 0 else { return .failure(.spawn("pipe: \(String(cString: strerror(errno)))")) }
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
        // Children start with default signal handling, whatever the bench ignores or blocks.
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
        var pid: pid_t = 0
        let status = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(fds[1])
        guard status == 0 else {
            close(fds[0])
            return .failure(.spawn("\(arguments[0]): \(String(cString: strerror(status)))"))
        }
        return .success((pid, fds[0]))
    }

    private func readStdout(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            state.withLock { state in
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
        state.withLock { state in
            if !state.partial.isEmpty { state.lines.append(String(decoding: state.partial, as: UTF8.self)) }
            state.partial = []
            state.stdoutClosed = true
        }
    }

    // MARK: Output

    /// The stdout lines so far.
    var lines: [String] { state.withLock { $0.lines } }

    /// Waits for the first stdout line that is a JSON object whose `event` is `event`; `nil` if
    /// the child exits, closes stdout or the deadline passes first.
    func waitForEvent(_ event: String, timeout: Duration) async -> BenchJSON? {
        await waitForJSON(timeout: timeout) { $0["event"]?.stringValue == event }
    }

    /// Waits for the first stdout line that is JSON and satisfies `predicate`.
    func waitForJSON(timeout: Duration, where predicate: (BenchJSON) -> Bool) async -> BenchJSON? {
        let deadline = ContinuousClock.now + timeout
        var checked = 0
        while true {
            let (lines, closed) = state.withLock { ($0.lines, $0.stdoutClosed) }
            for line in lines[checked...] {
                if let json = BenchJSON.parse(line), predicate(json) { return json }
            }
            checked = lines.count
            if closed || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Every JSON stdout line whose `event` is `event` so far.
    func events(_ event: String) -> [BenchJSON] {
        lines.compactMap { line in
            guard let json = BenchJSON.parse(line), json["event"]?.stringValue == event else { return nil }
            return json
        }
    }

    /// The last lines of the child's stderr, for error messages.
    func logTail(_ count: Int = 20) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let tail = text.split(separator: "\n").suffix(count)
        return tail.isEmpty ? "(\(name) wrote nothing to stderr)" : tail.map { "  \(name): \($0)" }.joined(separator: "\n")
    }

    // MARK: Lifetime

    /// Sends a signal (nothing once reaped).
    func signal(_ number: Int32) {
        let reaped = state.withLock { $0.exitStatus != nil }
        if !reaped { kill(pid, number) }
    }

    /// Whether the child has not been reaped yet (it may be a zombie waiting for ``waitForExit(timeout:)``).
    var isRunning: Bool { reap() == nil }

    /// The exit status once the child ended (128 + signal when killed), reaping it; `nil` while it runs.
    @discardableResult
    func reap() -> Int32? {
        state.withLock { state in
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

    /// Waits up to `timeout` for the child to end; kills it (SIGKILL) if it does not. Returns
    /// its status, or `nil` when it had to be killed.
    @discardableResult
    func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = reap() { return status }
            try? await Task.sleep(for: .milliseconds(10))
        }
        kill(pid, SIGKILL)
        while reap() == nil { try? await Task.sleep(for: .milliseconds(5)) }
        return nil
    }

    /// SIGTERM, then up to `grace` to end, then SIGKILL; always reaped afterwards.
    func stop(grace: Duration = .seconds(5)) async {
        guard isRunning else { return }
        signal(SIGTERM)
        await waitForExit(timeout: grace)
    }

    deinit {
        if state.withLock({ $0.exitStatus == nil }) {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
            ChildRegistry.shared.remove(pid)
        }
        unlink(logPath)
    }
}

/// Every child not reaped yet, so that an interrupted bench can stop them all.
final class ChildRegistry: Sendable {
    static let shared = ChildRegistry()
    private let pids = Mutex<Set<pid_t>>([])

    func add(_ pid: pid_t) { _ = pids.withLock { $0.insert(pid) } }
    func remove(_ pid: pid_t) { _ = pids.withLock { $0.remove(pid) } }

    /// SIGTERM to every child, up to `grace` for them to end, SIGKILL to the rest; reaps all.
    /// Blocks the calling thread (it runs on the signal queue when the bench is interrupted).
    func stopAll(grace: Duration) {
        var remaining = pids.withLock { $0 }
        for pid in remaining { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + grace
        while !remaining.isEmpty && ContinuousClock.now < deadline {
            for pid in remaining {
                var raw: Int32 = 0
                let result = waitpid(pid, &raw, WNOHANG)
                if result == pid || (result < 0 && errno == ECHILD) { remaining.remove(pid) }
            }
            usleep(10_000)
        }
        for pid in remaining {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
        pids.withLock { $0.removeAll() }
    }
}

/// One thread that runs every `posix_spawn` of the bench and lives until the bench ends.
///
/// `PR_SET_PDEATHSIG` fires when the *thread* that created the child ends, not the process; a
/// spawn from a pool thread that the runtime later retires would kill a healthy child.
final class SpawnerThread: Sendable {
    static let shared = SpawnerThread()

    private final class Queue: Sendable {
        let requests = Mutex<[@Sendable () -> Void]>([])
        let pending = DispatchSemaphore(value: 0)
    }

    private let queue = Queue()

    private init() {
        let queue = queue
        Thread.detachNewThread {
            while true {
                queue.pending.wait()
                let work = queue.requests.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                work?()
            }
        }
    }

    /// Runs `body` on the spawner thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        queue.requests.withLock { $0.append { result.withLock { $0 = body() }; done.signal() } }
        queue.pending.signal()
        done.wait()
        return result.withLock { $0! }
    }
}
