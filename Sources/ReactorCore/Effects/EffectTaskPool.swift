import Synchronization

/// Long-lived tasks that run the work of effect runs one after another, so that a run costs no
/// task of its own, and a burst of short runs costs no task switch each.
///
/// Why: a worker starts a run per job, and a job is a few microseconds of code. A new task for
/// each cost about an eighth of a worker's time (creating and destroying it, recording and
/// dropping its executor preference, the first slabs of its allocator). Waking a parked task
/// for each cost most of the rest of the runtime's share (the wake, the executor's switch into
/// the task, its status record): a worker receives jobs in batches of up to its prefetch.
///
/// So started works wait in one queue, in order, and a task that finished a work takes the
/// next one itself, up to ``drainLimit`` in a row. Exactly one task is woken (or created) for
/// the queue at a time, and a woken task that takes a work while more wait wakes the next: a
/// work that suspends (awaits the network, a timer) leaves the queue to that task, so as many
/// works run at once as are waiting, while works that run to their end without suspending are
/// all run by one task between two switches.
///
/// Cancellation stays exact: a run's handle cancels the pool's task only while that task runs
/// the run's work of the generation asked for, and a task that was cancelled is retired when
/// that work returns (a cancelled task stays cancelled), so no later run ever sees it. A work
/// whose run is cancelled while it waits in the queue is given no task: its body ends the run.
/// Parked tasks beyond ``idleLimit`` end; ``retireIdle()`` ends the rest.
///
/// What a run gives up: its work does not inherit the task-local values or the priority of
/// the code that started it (the worker starts runs from its loop thread, which has neither);
/// a pool made with a clock binds ``EffectClock/current`` to it once for each of its tasks.
final class EffectTaskPool: Sendable {
    /// One run's work for one task: ``EffectRun/launch(_:)``'s body and the generation it gets.
    struct Work: Sendable {
        let run: EffectRun
        let generation: UInt64
        let body: nonisolated(nonsending) @Sendable (_ generation: UInt64?) async -> Void
    }

    /// One long-lived task of the pool and what it runs now.
    final class PooledTask: Sendable {
        private struct State {
            var task: Task<Void, Never>?
            /// The run and generation whose work runs now; `nil` between works.
            var current: (run: ObjectIdentifier, generation: UInt64)?
            /// Cancelled while running `current`: ends when that work returns.
            var retiring = false
        }

        private let state = Mutex(State())

        /// Starts the task running `body`. Its handle is stored before the task can take a work
        /// (taking one locks this state), so a cancel for any of its works finds it.
        fileprivate func start(executor: (any TaskExecutor)?, _ body: @escaping @Sendable () async -> Void) {
            state.withLock { $0.task = Task(executorPreference: executor, operation: body) }
        }

        /// `run`'s work of `generation` runs now.
        func begin(_ run: EffectRun, generation: UInt64) {
            state.withLock { $0.current = (ObjectIdentifier(run), generation) }
        }

        /// The current work returned; whether this task is to end (it was cancelled).
        fileprivate func end() -> Bool {
            state.withLock { state in
                state.current = nil
                return state.retiring
            }
        }

        /// Cancels the task if it runs `run`'s work of `generation` now; else does nothing.
        func cancel(_ run: EffectRun, generation: UInt64) {
            let task = state.withLock { state -> Task<Void, Never>? in
                guard let current = state.current, current.run == ObjectIdentifier(run), current.generation == generation else { return nil }
                state.retiring = true
                return state.task
            }
            // Outside the lock: cancellation handlers run here, synchronously.
            task?.cancel()
        }
    }

    /// The task to wake for the queue, chosen under the lock and woken outside it.
    private enum Wake {
        case parked(UnsafeContinuation<Bool, Never>)
        case new(PooledTask)
    }

    private struct State {
        /// Works not yet taken, the oldest at `head`; taken slots are emptied at once, so the
        /// queue holds nothing of a work a task took.
        var queue: [Work?] = []
        var head = 0
        /// Tasks woken or created to take from the queue that have not taken a work yet: one at
        /// most, and one whenever works wait.
        var waking = 0
        /// Parked tasks, the most recently parked last.
        var idle: [UnsafeContinuation<Bool, Never>] = []
        /// Set by ``retireIdle()``: tasks that find the queue empty end instead of parking.
        var closed = false
        /// Tasks created so far.
        var started = 0

        var waiting: Int { queue.count - head }

        mutating func push(_ work: Work) { queue.append(work) }

        mutating func pop() -> Work? {
            guard head < queue.count else { return nil }
            let work = queue[head].take()
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= queue.count {
                queue.removeFirst(head)
                head = 0
            }
            return work
        }

        /// A task for the queue when works wait and none is on its way.
        mutating func wakeIfNeeded() -> Wake? {
            guard waiting > 0, waking == 0 else { return nil }
            waking = 1
            if let next = idle.popLast() { return .parked(next) }
            started += 1
            return .new(PooledTask())
        }
    }

    /// The most works one task runs in a row while others wait: then it parks, and the task
    /// woken for the queue goes on after the loop's other work (a long drain would delay it).
    static var drainLimit: Int { 64 }

    /// The most tasks kept parked; one that would be beyond ends.
    let idleLimit: Int
    /// The executor the pool's tasks prefer; `nil`: the global concurrent executor.
    private let executor: (any TaskExecutor)?
    /// ``EffectClock/current`` in the pool's tasks; `nil`: left as it is.
    private let clock: (any Clock<Duration>)?
    private let state = Mutex(State())

    init(executor: (any TaskExecutor)?, idleLimit: Int, clock: (any Clock<Duration>)? = nil) {
        self.executor = executor
        self.idleLimit = max(0, idleLimit)
        self.clock = clock
    }

    /// Queues `work` for the pool's tasks, waking one if none is on its way.
    func start(_ work: Work) {
        let wake = state.withLock { state in
            state.push(work)
            return state.wakeIfNeeded()
        }
        if let wake { self.wake(wake) }
    }

    /// Ends every parked task; tasks that find the queue empty end instead of parking. Works
    /// started later still run, each task ending when the queue is empty: for a runtime that stops.
    func retireIdle() {
        let parked = state.withLock { state in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        for next in parked { next.resume(returning: false) }
    }

    /// Parked tasks now (for tests).
    var idleCount: Int { state.withLock { $0.idle.count } }
    /// Tasks created so far (for tests).
    var tasksStarted: Int { state.withLock { $0.started } }

    private func wake(_ wake: Wake) {
        switch wake {
        case .parked(let next):
            next.resume(returning: true)
        case .new(let pooled):
            pooled.start(executor: executor) { [self] in await EffectClock.binding(clock) { await self.serve(pooled) } }
        }
    }

    /// A task's life: works from the queue, up to ``drainLimit`` in a row, then parked until
    /// woken for the queue again, until it is cancelled, not wanted back (the pool is full or
    /// closed) or retired.
    ///
    /// A parked task holds nothing of the work it ran: each work is consumed by the call that
    /// runs it, so a finished job's closures and payload go with it, as they went with its task.
    private func serve(_ pooled: PooledTask) async {
        var woken = true
        repeat {
            var ran = 0
            while ran < Self.drainLimit, let work = take(woken: woken) {
                woken = false
                ran += 1
                await Self.perform(consume work, on: pooled)
                if pooled.end() { return }
            }
            woken = true
        } while await park()
    }

    /// The next work, if any. A task `woken` for the queue is no longer on its way once it has
    /// looked, found a work or not; whoever takes a work while more wait wakes the next task.
    private func take(woken: Bool) -> Work? {
        let (work, wake) = state.withLock { state -> (Work?, Wake?) in
            if woken { state.waking = 0 }
            let work = state.pop()
            return (work, state.wakeIfNeeded())
        }
        if let wake { self.wake(wake) }
        return work
    }

    /// Runs `work` on `pooled`, which ends with this call; a work whose run was cancelled while
    /// it waited runs its body without a generation, which ends the run without an attempt.
    nonisolated(nonsending) private static func perform(_ work: consuming Work, on pooled: PooledTask) async {
        let generation = work.generation
        if work.run.adopt(pooled, generation: generation) {
            await work.body(generation)
        } else {
            await work.body(nil)
        }
    }

    /// Waits until woken for the queue; false when this task is to end instead.
    nonisolated(nonsending) private func park() async -> Bool {
        await withUnsafeContinuation { (next: UnsafeContinuation<Bool, Never>) in
            let parked = state.withLock { state in
                guard !state.closed, state.idle.count < idleLimit else { return false }
                state.idle.append(next)
                return true
            }
            if !parked { next.resume(returning: false) }
        }
    }
}
