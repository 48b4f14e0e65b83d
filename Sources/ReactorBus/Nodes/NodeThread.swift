import Foundation
import Synchronization
import ZeroMQ

/// The one thread a node's sockets live on, with a thread-safe way to stop it and wait for it.
///
/// ZeroMQ sockets are not thread-safe, so each node creates, uses and closes its sockets inside
/// the body it gives ``start(_:)``; the rest of the program talks to it only through this type
/// and ``Mailbox``es. `stop()` sets a flag and wakes the loop's poller through ``wakeup``; the
/// body checks ``isStopping`` once per turn and returns.
package final class NodeThread: Sendable {
    private enum Phase { case idle, running, finished }

    private struct Status {
        var phase: Phase = .idle
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The thread's name (visible in debuggers and `top -H`).
    package let name: String
    /// Register this with the loop's poller: it becomes readable when `stop()` is called.
    package let wakeup: Mailbox<Void>
    private let stopping = Atomic<Bool>(false)
    private let status = Mutex(Status())

    /// Creates a thread that has not started yet.
    package init(name: String) throws(ZMQError) {
        self.name = name
        self.wakeup = try Mailbox<Void>.forNode()
    }

    /// Whether `stop()` was called.
    package var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Whether the body has returned.
    package var isFinished: Bool { status.withLock { $0.phase == .finished } }

    /// Runs `body` on a new thread.
    ///
    /// - Returns: `false` (and runs nothing) when the thread was started before.
    @discardableResult
    package func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let starting = status.withLock { status -> Bool in
            guard status.phase == .idle else { return false }
            status.phase = .running
            return true
        }
        guard starting else { return false }
        let thread = Thread { [self] in
            body()
            let waiters = status.withLock { status -> [CheckedContinuation<Void, Never>] in
                status.phase = .finished
                defer { status.waiters.removeAll() }
                return status.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
        return true
    }

    /// Asks the loop to stop after the turn in hand. Idempotent; safe from any thread.
    package func stop() {
        if !stopping.exchange(true, ordering: .acquiringAndReleasing) {
            wakeup.post(())
        }
    }

    /// Returns once the body has returned (at once if it never started).
    package func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = status.withLock { status -> Bool in
                guard status.phase == .running else { return true }
                status.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
