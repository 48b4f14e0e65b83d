import Foundation
import Synchronization

/// A task executor whose jobs wait until the test opens it, then run one at a time on a thread
/// of its own, in the order they came: what runs in a pool's tasks, and how many times they were
/// switched to, is then exact. ``stop()`` ends the thread; jobs enqueued later never run.
final class HeldExecutor: TaskExecutor {
    private struct State {
        var jobs: [UnownedJob] = []
        var open = false
        var stopped = false
        var ran = 0
    }

    private let state = Mutex(State())
    private let signal = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.jobs.append(job) }
        signal.signal()
    }

    /// Jobs run so far: each is a switch into a task (its start, or its resumption).
    var ran: Int { state.withLock { $0.ran } }

    /// Starts running what waits, and what comes later.
    func open() {
        let first = state.withLock { state in
            defer { state.open = true }
            return !state.open
        }
        guard first else { return }
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Ends the thread (after the job it runs, if any) and waits for it.
    func stop() {
        let wasOpen = state.withLock { state in
            state.stopped = true
            return state.open
        }
        signal.signal()
        if wasOpen { done.wait() }
    }

    private func serve() {
        let executor = asUnownedTaskExecutor()
        while true {
            signal.wait()
            while let job = next() {
                job.runSynchronously(on: executor)
                state.withLock { $0.ran += 1 }
            }
            if state.withLock({ $0.stopped }) { break }
        }
        done.signal()
    }

    private func next() -> UnownedJob? {
        state.withLock { state in
            guard !state.stopped, !state.jobs.isEmpty else { return nil }
            return state.jobs.removeFirst()
        }
    }
}
