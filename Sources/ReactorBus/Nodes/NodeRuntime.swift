import Dispatch
import Foundation
import Synchronization
import SystemCalls
import ZeroMQ

/// The skeleton every node stands on: its one thread, the start handshake, the lifecycle.
///
/// ZeroMQ sockets are not thread-safe, so a node's loop (a ``NodeLoop``) is built, run and
/// dropped on the node's own thread; the rest of the program talks to it only through this type,
/// ``Mailbox``es and ``NodeMetrics``.
///
/// - **Handshake.** ``start(_:run:report:)`` starts the thread, which builds the loop there and reports
///   once: the loop's ``NodeLoop/Ready`` value, or the error that kept it from being built (the
///   thread then ends). The caller waits for that report, blocking or suspended.
/// - **Stopping.** ``stop()`` counts the request, wakes the loop's poller (``NodePoller``) and
///   returns; the loop checks ``isStopping`` once per turn, finishes and closes its sockets.
///   A second request (``isStoppingAtOnce``) lets a loop that drains gracefully give up at once.
/// - **Lifecycle.** ``serve(stop:)`` is what a node's `run() async throws` awaits: it returns
///   when the thread has ended, and task cancellation stops the node gracefully.
/// - **Calls.** A node that takes calls through a mailbox posts them with ``admit(_:)``: only
///   between the start and ``refuseCalls()``, which the loop calls before its final drain, so
///   every call admitted is seen by the loop.
final class NodeRuntime: Sendable {
    private enum Phase { case idle, running, finished }

    private struct Status {
        var phase: Phase = .idle
        var admitting = false
        var wakeup: Mailbox<Void>?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What ``start(_:run:report:)`` found.
    enum Startup<Ready: Sendable>: Sendable {
        /// The loop was built on the node's thread and now runs.
        case ready(Ready)
        /// The node was started before (it runs or has finished); nothing was done.
        case alreadyStarted
    }

    /// The thread's name (visible in debuggers and `top -H`).
    let name: String
    /// Why the node stopped on its own, if it did.
    let failure = NodeFailure()
    private let stopRequests = Atomic<Int>(0)
    private let status = Mutex(Status())

    /// A runtime whose thread has not started.
    init(name: String) {
        self.name = name
    }

    /// Creates the wakeup mailbox now rather than at the start, for nodes whose initializer
    /// promises to report running out of descriptors.
    func prepare() throws(ZMQError) {
        _ = try wakeupMailbox()
    }

    /// Whether ``stop()`` was called.
    var isStopping: Bool { stopRequests.load(ordering: .acquiring) >= 1 }

    /// Whether ``stop()`` was called twice or more: stop without draining.
    var isStoppingAtOnce: Bool { stopRequests.load(ordering: .acquiring) >= 2 }

    /// Whether ``start(_:run:report:)`` started the thread (it may have ended since).
    var hasStarted: Bool { status.withLock { $0.phase != .idle } }

    /// Whether the thread has ended (after a stop, a fatal error, or a failed build).
    var isFinished: Bool { status.withLock { $0.phase == .finished } }

    // MARK: Handshake

    /// Starts the thread and returns, without waiting, once it is on its way; `report` is called
    /// once, on the node's thread: with the loop's ready value once `build` returned, or with
    /// `build`'s error (then the thread ends at once). Called on a started runtime, it reports
    /// ``Startup/alreadyStarted`` at once on the calling thread.
    ///
    /// `run` is `{ $0.run() }`, written by the node: the loop's turns then run as code compiled
    /// for the node's concrete app types. Called here through the protocol, a generic loop's
    /// `run()` stays unspecialized across modules (the authority lost a quarter of its
    /// throughput to runtime generic-metadata lookups that way).
    func start<Loop: NodeLoop, Failure: Error>(
        _ build: @escaping @Sendable (NodeRuntime, NodePoller) throws(Failure) -> Loop,
        run: @escaping @Sendable (Loop) -> Void,
        report: @escaping @Sendable (Result<Startup<Loop.Ready>, Failure>) -> Void
    ) throws(ZMQError) {
        let wakeup = try wakeupMailbox()
        let starting = status.withLock { status -> Bool in
            guard status.phase == .idle else { return false }
            status.phase = .running
            status.admitting = true
            return true
        }
        guard starting else {
            report(.success(.alreadyStarted))
            return
        }
        let thread = Thread { [self] in
            // Named from inside, in the kernel (`top -H`, debuggers): see ``ThreadName``.
            ThreadName.setCurrent(name)
            do throws(Failure) {
                let loop = try build(self, NodePoller(wakeup: wakeup))
                report(.success(.ready(loop.ready)))
                run(loop)
            } catch {
                refuseCalls()
                report(.failure(error))
            }
            let waiters = status.withLock { status -> [CheckedContinuation<Void, Never>] in
                status.phase = .finished
                status.admitting = false
                defer { status.waiters.removeAll() }
                return status.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Starts the thread and blocks until the loop is built (for the nodes whose `start()` is
    /// synchronous: building only creates and connects sockets). A wakeup mailbox that cannot
    /// be created (descriptors ran out) is thrown as `mailboxFailure` makes it.
    func start<Loop: NodeLoop, Failure: Error>(
        mailboxFailure: (ZMQError) -> Failure,
        _ build: @escaping @Sendable (NodeRuntime, NodePoller) throws(Failure) -> Loop,
        run: @escaping @Sendable (Loop) -> Void
    ) throws(Failure) -> Startup<Loop.Ready> {
        let outcome = Mutex<Result<Startup<Loop.Ready>, Failure>?>(nil)
        let reported = DispatchSemaphore(value: 0)
        do throws(ZMQError) {
            try start(build, run: run) { result in
                outcome.withLock { $0 = result }
                reported.signal()
            }
        } catch {
            // The wakeup mailbox could not be created: nothing started.
            throw mailboxFailure(error)
        }
        reported.wait()
        // The report always comes before the signal.
        guard let result = outcome.withLock({ $0 }) else { return .alreadyStarted }
        return try result.get()
    }

    /// Starts the thread and suspends until the loop is built (for the authority, whose build
    /// recovers its journal and may take a while).
    func start<Loop: NodeLoop>(
        _ build: @escaping @Sendable (NodeRuntime, NodePoller) throws -> Loop,
        run: @escaping @Sendable (Loop) -> Void
    ) async throws -> Startup<Loop.Ready> {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Startup<Loop.Ready>, any Error>) in
            do {
                try start(build, run: run) { result in continuation.resume(with: result) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    // MARK: Stopping and waiting

    /// Asks the loop to stop after the turn in hand; returns how many times it was asked.
    /// Safe from any thread; each call wakes the loop.
    @discardableResult
    func stop() -> Int {
        let count = stopRequests.add(1, ordering: .acquiringAndReleasing).newValue
        status.withLock { $0.wakeup }?.post(())
        return count
    }

    /// Returns once the thread has ended (at once if it never started).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = status.withLock { status -> Bool in
                guard status.phase == .running else { return true }
                status.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The lifecycle of a started node as a service: returns when the thread has ended; task
    /// cancellation calls `stop` (the node's own, graceful stop) and still waits for the end.
    func serve(stop: @escaping @Sendable () -> Void) async {
        await withTaskCancellationHandler {
            await wait()
        } onCancel: {
            stop()
        }
    }

    // MARK: Calls

    /// Runs `post` (which hands a call to the loop's mailbox) if the node takes calls: started,
    /// and its loop has not called ``refuseCalls()``. Returns whether it ran.
    func admit(_ post: () -> Void) -> Bool {
        status.withLock { status in
            guard status.admitting else { return false }
            post()
            return true
        }
    }

    /// Refuses every later call. The loop calls it before its final drain; a closing handle may
    /// call it earlier. Returns whether calls were taken until now.
    @discardableResult
    func refuseCalls() -> Bool {
        status.withLock { status in
            defer { status.admitting = false }
            return status.admitting
        }
    }

    private func wakeupMailbox() throws(ZMQError) -> Mailbox<Void> {
        try status.withLock { status throws(ZMQError) -> Mailbox<Void> in
            if let wakeup = status.wakeup { return wakeup }
            let wakeup = try Mailbox<Void>.forNode()
            status.wakeup = wakeup
            return wakeup
        }
    }
}
