import Glibc
import Synchronization

/// Every ``ChildProcess`` not reaped yet, so that an interrupted program can stop them all.
package final class ChildRegistry: Sendable {
    /// The registry of this process.
    package static let shared = ChildRegistry()
    private let pids = Mutex<Set<pid_t>>([])

    func add(_ pid: pid_t) { _ = pids.withLock { $0.insert(pid) } }
    func remove(_ pid: pid_t) { _ = pids.withLock { $0.remove(pid) } }

    /// SIGTERM to every child, up to `grace` for them to end, SIGKILL to the rest; reaps all.
    /// Blocks the calling thread (it runs on a signal queue when a program is interrupted).
    package func stopAll(grace: Duration) {
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
