import Synchronization

/// One run of an effect started with ``EffectRunner/start(preparing:sink:completion:)``: the
/// handle that cancels it, from any thread.
///
/// Why a handle and not a `Task`: a run's attempts share one task until an attempt runs past
/// its timeout. Cancelling that task is how the timeout stops the attempt, and a cancelled task
/// stays cancelled, so the next attempt needs a task of its own. The handle always reaches the
/// task that runs now, and a cancelled run starts no further task.
public final class EffectRun: Sendable {
    private struct State {
        /// The task that runs the run's work now: its own, or one of a pool's.
        var task: RunTask?
        /// How many tasks the run has had: a timeout interrupts only the task it was set in.
        var generation: UInt64 = 0
        var isCancelled = false
    }

    /// A task of the run's own, or a pool's task lent for one generation.
    private enum RunTask {
        case own(Task<Void, Never>)
        case pooled(EffectTaskPool.PooledTask)
    }

    private let state = Mutex(State())
    /// The executor the run's own tasks prefer; `nil`: the global concurrent executor.
    private let executor: (any TaskExecutor)?
    /// Where the run's work runs instead of tasks of its own, when given.
    private let pool: EffectTaskPool?

    /// Creates a run that has no task yet; ``EffectRunner`` gives it one: a task of `pool`, or
    /// else a new task preferring `executor`.
    init(executor: (any TaskExecutor)? = nil, pool: EffectTaskPool? = nil) {
        self.executor = executor
        self.pool = pool
    }

    /// Cancels the run: the running attempt sees its task cancelled, no further attempt starts,
    /// and the run ends with a "cancelled" failure unless it had ended already.
    public func cancel() {
        let (task, generation) = state.withLock { state in
            state.isCancelled = true
            return (state.task, state.generation)
        }
        cancel(task, generation: generation)
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Runs `body` in a new task, which becomes the run's task, or queues it for the pool's
    /// tasks; `body` gets the task's generation, or `nil` when the run was cancelled while it
    /// waited for a pool's task (it then ends the run without an attempt). Returns false, and
    /// starts nothing, when the run was cancelled.
    ///
    /// A task of the run's own is created under the lock, so an ``interrupt(generation:)`` that
    /// follows always finds the task of its generation; a pool's task registers when it takes
    /// the work (``adopt(_:generation:)``), before the work's first attempt can set a timeout.
    func launch(_ body: nonisolated(nonsending) @escaping @Sendable (_ generation: UInt64?) async -> Void) -> Bool {
        let launched = state.withLock { state -> (started: Bool, queued: UInt64?) in
            guard !state.isCancelled else { return (false, nil) }
            state.generation &+= 1
            let generation = state.generation
            guard pool == nil else {
                state.task = nil
                return (true, generation)
            }
            state.task = .own(Task(executorPreference: executor) { await body(generation) })
            return (true, nil)
        }
        if let pool, let generation = launched.queued { pool.start(EffectTaskPool.Work(run: self, generation: generation, body: body)) }
        return launched.started
    }

    /// A pool's task begins this run's work of `generation` and becomes the run's task; false,
    /// and nothing changes, when the run was cancelled while the work waited.
    func adopt(_ task: EffectTaskPool.PooledTask, generation: UInt64) -> Bool {
        state.withLock { state in
            guard !state.isCancelled else { return false }
            state.task = .pooled(task)
            task.begin(self, generation: generation)
            return true
        }
    }

    /// Cancels the task of `generation`, for a timeout set in it; a later task is left alone
    /// (the timeout may come after its attempt has already moved on to a new task).
    func interrupt(generation: UInt64) {
        let task = state.withLock { $0.generation == generation ? $0.task : nil }
        cancel(task, generation: generation)
    }

    /// Cancels `task` if it still runs this run's work of `generation` (a pool's task may have
    /// moved on to another run's: then it is left alone).
    private func cancel(_ task: RunTask?, generation: UInt64) {
        switch task {
        case .own(let task): task.cancel()
        case .pooled(let task): task.cancel(self, generation: generation)
        case nil: break
        }
    }
}
