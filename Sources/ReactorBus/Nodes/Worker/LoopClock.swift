import ReactorCore
import Synchronization
import ZeroMQ

/// The clock a worker's effects and subscriptions wait on (``EffectClock/current`` in their
/// tasks): a sleep is an entry in a heap, and the worker's loop wakes it in the first turn after
/// its deadline, on the loop's own thread.
///
/// Why: `Task.sleep` on Linux arms a Dispatch timer per call; it fires on a Dispatch thread,
/// which hands the task back to the loop's executor and wakes the loop. In the bench's effects
/// phase (effects that wait 10 ms) those threads took more CPU than the worker's loop itself.
/// Here the loop polls with the earliest deadline as its timeout and resumes what is due while
/// it drains its effect slices, so the woken tasks run in the same turn, and no other thread
/// takes part.
///
/// Precision: a sleep never ends before its deadline (`ContinuousClock` instants, read by the
/// loop before it resumes a sleeper), and ends in the loop's first turn after it: the loop's
/// poll waits to the nanosecond (`ppoll`), so that is the system's timer slack (50 µs by
/// default) plus whatever the turn before had to do.
/// Cancelling the sleeping task ends the sleep at once with `CancellationError`. Once the
/// loop has ended (``close()``), sleeps that remain or begin wait on a `ContinuousClock`.
///
/// Threads: any thread may sleep on the clock (effects moved to the shared pool do); a sleep
/// that becomes the earliest while the loop waits wakes it through ``wake``. ``nextWake()``,
/// ``resumeDue()`` and ``close()`` are the loop's, on its thread.
final class LoopClock: Clock {
    typealias Instant = ContinuousClock.Instant
    typealias Duration = Swift.Duration

    /// Posted when a sleep must end before the deadline the loop waits for; the loop polls it.
    let wake: Mailbox<Void>
    private let state = Mutex(State())
    /// Reads the time: `ContinuousClock`'s, or a test's.
    private let reading: @Sendable () -> Instant

    /// Creates the clock and its wake-up mailbox.
    /// - Parameter now: where the time is read; a test may hold it still or move it on.
    /// - Throws: ``ZMQError`` when the mailbox's descriptors cannot be made.
    init(now: @escaping @Sendable () -> Instant = { ContinuousClock.now }) throws(ZMQError) {
        wake = try Mailbox<Void>.forNode()
        reading = now
    }

    var now: Instant { reading() }
    /// The system's default timer slack: the loop's poll may wake that much after a deadline.
    var minimumResolution: Duration { .microseconds(50) }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        guard deadline > now else {
            try Task.checkCancellation()
            return
        }
        let sleeper = Sleeper(deadline: deadline)
        let woken = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Bool, any Error>) in
                register(sleeper, continuation)
            }
        } onCancel: {
            sleeper.cancel()
        }
        // The loop ended before the deadline: the rest of the wait is the system clock's.
        if !woken { try await ContinuousClock().sleep(until: deadline, tolerance: tolerance) }
    }

    /// Sleeps waiting now (for tests).
    var sleeping: Int { state.withLock { $0.heap.count { $0.sleeper.isWaiting } } }
    /// Entries in the heap, cancelled sleeps not dropped yet included (for tests).
    var entries: Int { state.withLock { $0.heap.count } }

    // MARK: The loop's side

    /// The ``MonotonicClock`` nanosecond by which the earliest sleep's deadline has passed
    /// (`.max` when nothing sleeps): the latest the loop's poll may wait. From this call until
    /// ``resumeDue()``, a sleep that begins with an earlier deadline posts to ``wake``. Call it
    /// right before the poll.
    func nextWake() -> UInt64 {
        let deadline = state.withLock { state in
            state.dropEnded()
            state.loopWaits = true
            return state.heap.first?.deadline
        }
        guard let deadline else { return .max }
        let remaining = deadline - now
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        // Not rounded to a coarser step to wake for several sleeps at once: waking a whole
        // millisecond late (as a poll in milliseconds did) saved a little CPU per job at 1,000
        // effects of 10 ms in flight, and cost 100 of them 0.03x-0.05x of their ideal rate.
        return MonotonicClock.nanoseconds() &+ UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000) &+ 1
    }

    /// Resumes every sleep whose deadline has passed, earliest first (then in the order they
    /// began). Call it once in every turn after the poll.
    func resumeDue() {
        let due = state.withLock { state -> [UnsafeContinuation<Bool, any Error>] in
            state.loopWaits = false
            guard let first = state.heap.first else { return [] }
            let now = reading()
            guard first.deadline <= now else { return [] }
            var due: [UnsafeContinuation<Bool, any Error>] = []
            while let top = state.heap.first, top.deadline <= now {
                state.popFirst()
                if let continuation = top.sleeper.end() { due.append(continuation) }
            }
            return due
        }
        for continuation in due { continuation.resume(returning: true) }
    }

    /// The loop has ended: sleeps that remain, and those that begin later, wait on a
    /// `ContinuousClock` for the rest of their time.
    func close() {
        let waiting = state.withLock { state -> [UnsafeContinuation<Bool, any Error>] in
            state.closed = true
            defer { state.heap = [] }
            return state.heap.compactMap { $0.sleeper.end() }
        }
        for continuation in waiting { continuation.resume(returning: false) }
    }

    /// Enters `sleeper` into the heap, or ends its wait at once when it was cancelled already
    /// or the loop has ended.
    private func register(_ sleeper: Sleeper, _ continuation: UnsafeContinuation<Bool, any Error>) {
        enum Registration { case waiting(wakeLoop: Bool), cancelled, closed }
        let registration = state.withLock { state -> Registration in
            guard !state.closed else { return .closed }
            guard sleeper.wait(continuation) else { return .cancelled }
            let earliest = state.heap.first.map { sleeper.deadline < $0.deadline } ?? true
            state.push(sleeper)
            // One post is enough: the loop reads the earliest deadline again before it waits.
            let wakeLoop = earliest && state.loopWaits
            if wakeLoop { state.loopWaits = false }
            return .waiting(wakeLoop: wakeLoop)
        }
        switch registration {
        case .waiting(let wakeLoop):
            if wakeLoop { wake.post(()) }
        case .cancelled:
            continuation.resume(throwing: CancellationError())
        case .closed:
            continuation.resume(returning: false)
        }
    }
}

extension LoopClock {
    /// One sleep: its deadline and how far it got.
    private final class Sleeper: Sendable {
        enum Phase {
            /// Begun, not in the heap yet.
            case new
            case waiting(UnsafeContinuation<Bool, any Error>)
            /// Cancelled before it was in the heap: it ends as soon as it gets there.
            case cancelled
            /// Resumed, or about to be.
            case ended
        }

        let deadline: Instant
        let phase = Mutex(Phase.new)

        init(deadline: Instant) {
            self.deadline = deadline
        }

        /// Stores the continuation; false when the sleep was cancelled first.
        func wait(_ continuation: UnsafeContinuation<Bool, any Error>) -> Bool {
            phase.withLock { phase in
                guard case .new = phase else { return false }
                phase = .waiting(continuation)
                return true
            }
        }

        /// Ends the wait: the continuation to resume, if it was still waiting.
        func end() -> UnsafeContinuation<Bool, any Error>? {
            phase.withLock { phase in
                guard case .waiting(let continuation) = phase else { return nil }
                phase = .ended
                return continuation
            }
        }

        /// The task was cancelled: a waiting sleep ends now with `CancellationError`; one not in
        /// the heap yet ends when it gets there. Its heap entry stays until the loop drops it.
        func cancel() {
            let continuation = phase.withLock { phase -> UnsafeContinuation<Bool, any Error>? in
                switch phase {
                case .new:
                    phase = .cancelled
                    return nil
                case .waiting(let continuation):
                    phase = .ended
                    return continuation
                case .cancelled, .ended:
                    return nil
                }
            }
            continuation?.resume(throwing: CancellationError())
        }

        var isWaiting: Bool {
            phase.withLock { phase in
                if case .waiting = phase { return true }
                return false
            }
        }
    }

    /// A sleep in the heap, with its place among sleeps of the same deadline.
    private struct Entry {
        let deadline: Instant
        let order: UInt64
        let sleeper: Sleeper

        /// Heap order: earlier deadline first, then the sleep that entered first.
        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : order < other.order
        }
    }

    /// The sleeps in a binary min-heap, and the loop's side of the wake-up.
    private struct State {
        var heap: [Entry] = []
        var entered: UInt64 = 0
        /// The loop is between ``nextDeadline()`` and ``resumeDue()``: an earlier sleep must wake it.
        var loopWaits = false
        var closed = false
        /// Entries of cancelled sleeps are dropped from the whole heap when it reaches this size.
        var compactAt = 1_024

        mutating func push(_ sleeper: Sleeper) {
            entered &+= 1
            if heap.count >= compactAt {
                heap.removeAll { !$0.sleeper.isWaiting }
                heapify()
                compactAt = max(1_024, heap.count * 2)
            }
            heap.append(Entry(deadline: sleeper.deadline, order: entered, sleeper: sleeper))
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child].precedes(heap[parent]) else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        mutating func popFirst() {
            let last = heap.removeLast()
            guard !heap.isEmpty else { return }
            heap[0] = last
            siftDown(0)
        }

        /// Pops cancelled sleeps off the top, so the loop does not wake for them.
        mutating func dropEnded() {
            while let top = heap.first, !top.sleeper.isWaiting { popFirst() }
        }

        private mutating func heapify() {
            var index = heap.count / 2
            while index > 0 {
                index -= 1
                siftDown(index)
            }
        }

        private mutating func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { return }
                let right = left + 1
                let child = right < heap.count && heap[right].precedes(heap[left]) ? right : left
                guard heap[child].precedes(heap[parent]) else { return }
                heap.swapAt(child, parent)
                parent = child
            }
        }
    }
}
