import Dispatch
import Foundation
import Glibc
import Synchronization
import SystemCalls

/// A thread that runs one loop until it is stopped: the loop sleeps through ``pause(_:)``,
/// which ``stop()`` cuts short, and ``stop()`` returns once the loop has returned.
final class LoopThread: Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// The loop thread's `pthread_self()`, so that a stop from inside the loop does not wait for
    /// itself; 0 until the thread runs.
    private let threadID = Atomic<UInt>(0)

    private init() {}

    /// Starts `loop` on a new thread named `name`.
    static func start(name: String, _ loop: @escaping @Sendable (LoopThread) -> Void) -> LoopThread {
        let thread = LoopThread()
        Thread.detachNewThread {
            thread.threadID.store(UInt(pthread_self()), ordering: .releasing)
            ThreadName.setCurrent(name)
            loop(thread)
            thread.finished.signal()
        }
        return thread
    }

    /// Whether ``stop()`` was called.
    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Sleeps up to `duration`; returns false (at once) when the thread is asked to stop.
    func pause(_ duration: Duration) -> Bool {
        guard !isStopping else { return false }
        if duration > .zero {
            let (seconds, attoseconds) = min(duration, .seconds(3_600)).components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            _ = wake.wait(timeout: .now() + .nanoseconds(nanoseconds))
        }
        return !isStopping
    }

    /// Asks the loop to end and waits until it has (unless called from the loop itself).
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else {
            join()
            return
        }
        wake.signal()
        join()
    }

    private func join() {
        guard threadID.load(ordering: .acquiring) != UInt(pthread_self()) else { return }
        finished.wait()
        // Every other caller of stop() waits on the same signal.
        finished.signal()
    }
}
