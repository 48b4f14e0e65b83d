import Synchronization

/// The sleeps of a clock that something else moves on: each waits, in a heap ordered by its
/// deadline (then by the order the sleeps began), until its owner resumes what is due. Shared
/// by the worker's loop clock (its loop resumes) and the testing kit's `TestClock` (the test
/// does), so that both end sleeps alike.
///
/// A sleep of a cancelled task ends at once with `CancellationError`; its heap entry stays
/// until it reaches the top or the heap, grown to twice its last size, drops every ended entry.
/// After ``close()`` every sleep, waiting or new, ends with `false`: its owner can no longer
/// resume it, and says what to do instead.
package final class SleepQueue: Sendable {
    package typealias Instant = ContinuousClock.Instant

    private let state = Mutex(State())

    package init() {}

    /// Waits until ``resume(dueBy:)`` passes `deadline` (`true`) or ``close()`` came first
    /// (`false`); a deadline not after `now`, the owner's time, does not wait (`true`).
    /// `entered` runs once the sleep is in the heap, outside the lock, told whether it is now the
    /// earliest (not run when the sleep ends at once: due, cancelled or closed).
    /// - Throws: `CancellationError` when the task is cancelled, before or during the wait.
    package func wait(until deadline: Instant, now: Instant, entered: (_ isEarliest: Bool) -> Void = { _ in }) async throws -> Bool {
        guard deadline > now else {
            try Task.checkCancellation()
            return true
        }
        let sleeper = Sleeper()
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Bool, any Error>) in
                enum Registration { case waiting(isEarliest: Bool), cancelled, closed }
                let registration = state.withLock { state -> Registration in
                    guard !state.closed else { return .closed }
                    guard sleeper.wait(continuation) else { return .cancelled }
                    let isEarliest = state.heap.first.map { deadline < $0.deadline } ?? true
                    state.push(sleeper, deadline: deadline)
                    return .waiting(isEarliest: isEarliest)
                }
                switch registration {
                case .waiting(let isEarliest): entered(isEarliest)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .closed: continuation.resume(returning: false)
                }
            }
        } onCancel: {
            sleeper.cancel()
        }
    }

    /// The earliest deadline of a sleep still waiting, if any (ended sleeps on top are dropped).
    package func earliest() -> Instant? {
        state.withLock { state in
            state.dropEnded()
            return state.heap.first?.deadline
        }
    }

    /// Resumes every sleep whose deadline is at or before `now()`, earliest first (then in the
    /// order they began). `now` is read once, and only when something sleeps.
    package func resume(dueBy now: () -> Instant) {
        let due = state.withLock { state -> [UnsafeContinuation<Bool, any Error>] in
            guard let first = state.heap.first else { return [] }
            let now = now()
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

    /// Ends every sleep with `false`, and every later one at once.
    package func close() {
        let waiting = state.withLock { state -> [UnsafeContinuation<Bool, any Error>] in
            state.closed = true
            defer { state.heap = [] }
            return state.heap.compactMap { $0.sleeper.end() }
        }
        for continuation in waiting { continuation.resume(returning: false) }
    }

    /// Sleeps waiting now.
    package var sleeping: Int { state.withLock { $0.heap.count { $0.sleeper.isWaiting } } }
    /// Entries in the heap, those of ended sleeps not dropped yet included.
    package var entries: Int { state.withLock { $0.heap.count } }
}

extension SleepQueue {
    /// One sleep and how far it got.
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

        let phase = Mutex(Phase.new)

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
        /// the heap yet ends when it gets there.
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

    /// The sleeps in a binary min-heap.
    private struct State {
        var heap: [Entry] = []
        var entered: UInt64 = 0
        var closed = false
        /// Ended sleeps are dropped from the whole heap when it reaches this size.
        var compactAt = 1_024

        mutating func push(_ sleeper: Sleeper, deadline: Instant) {
            entered &+= 1
            if heap.count >= compactAt {
                heap.removeAll { !$0.sleeper.isWaiting }
                heapify()
                compactAt = max(1_024, heap.count * 2)
            }
            heap.append(Entry(deadline: deadline, order: entered, sleeper: sleeper))
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

        /// Pops ended sleeps off the top, so that the owner does not wake for them.
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
