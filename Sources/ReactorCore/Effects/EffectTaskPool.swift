import Synchronization

/// Long-lived tasks that run the work of effect runs one after another, so that a run costs no
/// task of its own.
///
/// Why: a worker starts a run per job, and a job is a few microseconds of code. A new task for
/// each cost about an eighth of a worker's time (creating and destroying it, recording and
/// dropping its executor preference, the first slabs of its allocator). A task of this pool
/// that finished a run's work parks and takes the next run's, keeping all of that.
///
/// Cancellation stays exact: a run's handle cancels the pool's task only while that task runs
/// the run's work of the generation asked for, and a task that was cancelled is retired when
/// that work returns (a cancelled task stays cancelled), so no later run ever sees it. Parked
/// tasks beyond ``idleLimit`` end; ``retireIdle()`` ends the rest.
///
/// What a run gives up: its work does not inherit the task-local values or the priority of
/// the code that started it (the worker starts runs from its loop thread, which has neither).
final class EffectTaskPool: Sendable {
    /// One run's work for one task: ``EffectRun/launch(_:)``'s body and the generation it gets.
    struct Work: Sendable {
        let run: EffectRun
        let generation: UInt64
        let body: @Sendable (_ generation: UInt64) async -> Void
    }

    /// One long-lived task of the pool and what it runs now.
    final class PooledTask: Sendable {
        private struct State {
            var task: Task<Void, Never>?
            /// A new task's first work, until the task takes it (not captured by the task's
            /// closure, which lives as long as the task).
            var first: Work?
            /// The run and generation whose work runs now; `nil` while parked.
            var current: (run: ObjectIdentifier, generation: UInt64)?
            /// Cancelled while running `current`: ends when that work returns.
            var retiring = false
        }

        private let state = Mutex(State())

        fileprivate func set(_ task: Task<Void, Never>) { state.withLock { $0.task = task } }

        /// `work` runs now; a new task's first work is also left here for the task to take.
        fileprivate func begin(_ work: Work, asFirst: Bool = false) {
            state.withLock { state in
                state.current = (ObjectIdentifier(work.run), work.generation)
                if asFirst { state.first = work }
            }
        }

        fileprivate func takeFirst() -> Work? {
            state.withLock { state in
                defer { state.first = nil }
                return state.first
            }
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

    private struct State {
        /// Parked tasks, the most recently parked last.
        var idle: [(task: PooledTask, next: UnsafeContinuation<Work?, Never>)] = []
        /// Set by ``retireIdle()``: tasks that finish their work end instead of parking.
        var closed = false
        /// Tasks created so far.
        var started = 0
    }

    /// The most tasks kept parked; one that would be beyond ends.
    let idleLimit: Int
    /// The executor the pool's tasks prefer; `nil`: the global concurrent executor.
    private let executor: (any TaskExecutor)?
    private let state = Mutex(State())

    init(executor: (any TaskExecutor)?, idleLimit: Int) {
        self.executor = executor
        self.idleLimit = max(0, idleLimit)
    }

    /// Runs `work` in a parked task, or in a new one if none is parked; returns that task, through
    /// which the run cancels it.
    func start(_ work: Work) -> PooledTask {
        let parked = state.withLock { state -> (task: PooledTask, next: UnsafeContinuation<Work?, Never>)? in
            if let parked = state.idle.popLast() { return parked }
            state.started += 1
            return nil
        }
        if let parked {
            parked.task.begin(work)
            parked.next.resume(returning: work)
            return parked.task
        }
        let pooled = PooledTask()
        pooled.begin(work, asFirst: true)
        // The handle is stored before anything can cancel through it: a cancel for this work
        // goes through the run, whose lock is held while this runs (see `EffectRun.launch`).
        pooled.set(Task(executorPreference: executor) { [self] in await self.serve(pooled) })
        return pooled
    }

    /// Ends every parked task, and every task when its work returns: for a runtime that stops.
    /// Runs started later still get a task each, which ends with its work.
    func retireIdle() {
        let parked = state.withLock { state in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        for task in parked { task.next.resume(returning: nil) }
    }

    /// Parked tasks now (for tests).
    var idleCount: Int { state.withLock { $0.idle.count } }
    /// Tasks created so far (for tests).
    var tasksStarted: Int { state.withLock { $0.started } }

    /// A task's life: its first work, then what it is given while parked, until it is
    /// cancelled, not wanted back (the pool is full or closed) or retired.
    ///
    /// A parked task holds nothing of the work it ran: each work is consumed by the call that
    /// runs it, so a finished job's closures and payload go with it, as they went with its task.
    private func serve(_ pooled: PooledTask) async {
        var next = pooled.takeFirst()
        while let work = next {
            next = nil
            await Self.perform(consume work)
            if pooled.end() { return }
            next = await park(pooled)
        }
    }

    /// Runs `work`, which ends with this call.
    private static func perform(_ work: consuming Work) async {
        await work.body(work.generation)
    }

    /// Waits for the next work; `nil` when this task is to end instead.
    private func park(_ pooled: PooledTask) async -> Work? {
        await withUnsafeContinuation { (next: UnsafeContinuation<Work?, Never>) in
            let parked = state.withLock { state in
                guard !state.closed, state.idle.count < idleLimit else { return false }
                state.idle.append((pooled, next))
                return true
            }
            if !parked { next.resume(returning: nil) }
        }
    }
}
