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
///
/// The heap holds each deadline as attoseconds from the queue's ``origin`` and its sleeper
/// unretained, so that moving an entry is copying 32 plain bytes: `ContinuousClock.Instant` is
/// not a frozen type, so a heap of instants moved and compared every entry through the
/// standard library's run-time calls, and the sleeper's reference was retained and released
/// at every swap (a tenth of a worker's time with 1,000 sleeping effects in flight).
package final class SleepQueue: Sendable {
    package typealias Instant = ContinuousClock.Instant

    private let state = Mutex(State())
    /// Where the heap's deadlines count from; any instant does, deadlines before it count down.
    private let origin: Instant
#if DEBUG
    /// Sleepers of this queue still alive (debug builds): the heap holds its references by
    /// hand, and tests check that every one is given back, also after the queue is gone.
    package let liveSleepers = LiveCount()

    package final class LiveCount: Sendable {
        private let count = Atomic(0)
        package var value: Int { count.load(ordering: .relaxed) }
        func add(_ delta: Int) { count.add(delta, ordering: .relaxed) }
    }
#endif

    package init() {
        origin = .now
    }

    deinit {
        // The heap's references to its sleepers (a queue dropped without ``close()``).
        state.withLock { state in
            for entry in state.heap { entry.sleeper.release() }
        }
    }

    /// `instant` as the heap keeps it: exact, in attoseconds from ``origin``.
    private func offset(_ instant: Instant) -> Int128 {
        (instant - origin).attoseconds
    }

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
#if DEBUG
        let sleeper = Sleeper(live: liveSleepers)
#else
        let sleeper = Sleeper()
#endif
        let key = offset(deadline)
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Bool, any Error>) in
                enum Registration { case waiting(isEarliest: Bool), cancelled, closed }
                let registration = state.withLock { state -> Registration in
                    guard !state.closed else { return .closed }
                    guard sleeper.wait(continuation) else { return .cancelled }
                    let isEarliest = state.heap.first.map { key < $0.deadline } ?? true
                    state.push(sleeper, deadline: key)
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
            return state.heap.first.map { origin + Duration(attoseconds: $0.deadline) }
        }
    }

    /// Resumes every sleep whose deadline is at or before `now()`, earliest first (then in the
    /// order they began). `now` is read once, and only when something sleeps.
    package func resume(dueBy now: () -> Instant) {
        let due = state.withLock { state -> [UnsafeContinuation<Bool, any Error>] in
            guard let first = state.heap.first else { return [] }
            let now = offset(now())
            guard first.deadline <= now else { return [] }
            var due: [UnsafeContinuation<Bool, any Error>] = []
            while let top = state.heap.first, top.deadline <= now {
                state.popFirst()
                if let continuation = top.sleeper.takeRetainedValue().end() { due.append(continuation) }
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
            return state.heap.compactMap { $0.sleeper.takeRetainedValue().end() }
        }
        for continuation in waiting { continuation.resume(returning: false) }
    }

    /// Sleeps waiting now.
    package var sleeping: Int { state.withLock { $0.heap.count { $0.isWaiting } } }
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
#if DEBUG
        private let live: LiveCount

        init(live: LiveCount) {
            self.live = live
            live.add(1)
        }

        deinit {
            live.add(-1)
        }
#endif

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

    /// A sleep in the heap, with its place among sleeps of the same deadline. The heap owns one
    /// reference to `sleeper` (retained when pushed, released when the entry leaves the heap).
    private struct Entry {
        /// Attoseconds from the queue's origin.
        let deadline: Int128
        let order: UInt64
        let sleeper: Unmanaged<Sleeper>

        /// Heap order: earlier deadline first, then the sleep that entered first.
        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : order < other.order
        }

        var isWaiting: Bool { sleeper._withUnsafeGuaranteedRef { $0.isWaiting } }
    }

    /// The sleeps in a binary min-heap.
    private struct State {
        var heap: [Entry] = []
        var entered: UInt64 = 0
        var closed = false
        /// Ended sleeps are dropped from the whole heap when it reaches this size.
        var compactAt = 1_024

        mutating func push(_ sleeper: Sleeper, deadline: Int128) {
            entered &+= 1
            if heap.count >= compactAt {
                heap.removeAll { entry in
                    guard !entry.isWaiting else { return false }
                    entry.sleeper.release()
                    return true
                }
                heapify()
                compactAt = max(1_024, heap.count * 2)
            }
            heap.append(Entry(deadline: deadline, order: entered, sleeper: .passRetained(sleeper)))
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child].precedes(heap[parent]) else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        /// Removes the top entry; the caller takes over its reference to the sleeper.
        mutating func popFirst() {
            let last = heap.removeLast()
            guard !heap.isEmpty else { return }
            heap[0] = last
            siftDown(0)
        }

        /// Pops ended sleeps off the top, so that the owner does not wake for them.
        mutating func dropEnded() {
            while let top = heap.first, !top.isWaiting {
                popFirst()
                top.sleeper.release()
            }
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
