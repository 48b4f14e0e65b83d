import Dispatch
import Foundation
import Synchronization

/// One thread that runs every `posix_spawn` of ``ChildProcess`` and lives as long as the process.
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
        // `body` stored its result before signalling `done`.
        return result.withLock { $0! }
    }
}
