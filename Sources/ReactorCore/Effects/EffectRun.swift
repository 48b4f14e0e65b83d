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
        var task: Task<Void, Never>?
        /// How many tasks the run has had: a timeout interrupts only the task it was set in.
        var generation: UInt64 = 0
        var isCancelled = false
    }

    private let state = Mutex(State())
    /// The executor the run's tasks prefer; `nil`: the global concurrent executor.
    private let executor: (any TaskExecutor)?

    /// Creates a run that has no task yet; ``EffectRunner`` gives it one, preferring `executor`.
    init(executor: (any TaskExecutor)? = nil) {
        self.executor = executor
    }

    /// Cancels the run: the running attempt sees its task cancelled, no further attempt starts,
    /// and the run ends with a "cancelled" failure unless it had ended already.
    public func cancel() {
        let task = state.withLock { state in
            state.isCancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Runs `body` in a new task, which becomes the run's task; `body` gets the task's generation.
    /// Returns false, and starts nothing, when the run was cancelled.
    ///
    /// The task is created under the lock, so an ``interrupt(generation:)`` that follows always
    /// finds the task of its generation.
    func launch(_ body: @escaping @Sendable (_ generation: UInt64) async -> Void) -> Bool {
        state.withLock { state in
            guard !state.isCancelled else { return false }
            state.generation &+= 1
            let generation = state.generation
            state.task = Task(executorPreference: executor) { await body(generation) }
            return true
        }
    }

    /// Cancels the task of `generation`, for a timeout set in it; a later task is left alone
    /// (the timeout may come after its attempt has already moved on to a new task).
    func interrupt(generation: UInt64) {
        let task = state.withLock { $0.generation == generation ? $0.task : nil }
        task?.cancel()
    }
}
