/// How one run of an effect ended, after retries.
public enum EffectOutcome: Sendable, Hashable {
    /// The effect returned; `emitCount` mutations were emitted by the last attempt.
    case done(emitCount: UInt32)
    /// Every attempt failed.
    case failed(EffectFailure)
}

/// Runs effects with a ``RetryPolicy``: per-attempt timeout, retries with backoff.
///
/// Shared by the local store and the worker node so that both treat effects alike. Each attempt
/// numbers its emits from 0 again; the sequencer drops indices it has already applied, which is
/// what makes re-running an effect safe.
///
/// Timeouts: by default an attempt with a timeout runs in a task group next to a task that
/// sleeps out the timeout. A runtime that runs many effects passes ``deadlines`` and starts
/// each run with ``start(preparing:sink:completion:)``: the run's attempts then share one
/// task, which the service cancels at an attempt's deadline, so an attempt costs no timer and
/// no task of its own (the worker node's per-job overhead was mostly those). Only an attempt
/// that timed out leaves its task to the next attempt in a new one.
public struct EffectRunner<Handler: EffectHandler>: Sendable {
    /// The handler that does the work.
    public var handler: Handler { parts.handler }
    /// Attempts, backoff and timeout.
    public var policy: RetryPolicy { parts.policy }
    /// Times out attempts; `nil` gives each attempt its own sleeping timeout task.
    public var deadlines: (any EffectDeadlines)? { parts.deadlines }
    /// Where the tasks of runs started with ``start(preparing:sink:completion:)`` (and of ``run(_:sink:)``
    /// with ``deadlines``) run: their executor preference, which their child tasks inherit.
    /// `nil`: the global concurrent executor. A worker node passes its loop's executor, so that
    /// a job's code runs between the loop's socket reads instead of on another thread.
    public var executor: (any TaskExecutor)? { parts.executor }
    /// Tasks kept from finished runs for the next ones, when the runner reuses tasks.
    var pool: EffectTaskPool? { parts.pool }
    /// The clock the runs wait on (``EffectClock/current`` in their tasks, and the backoff
    /// between attempts); `nil`: whatever the calling task has, a `ContinuousClock` by default.
    public var clock: (any Clock<Duration>)? { parts.clock }

    /// Everything the runner holds, in one object: a runner is then one reference, whatever the
    /// handler's type, so the closures a run captures it in are laid out without asking the
    /// run-time for the runner's type metadata (generic code that is not specialised did, per
    /// run, for a runner that held the handler itself).
    private let parts: Parts

    private final class Parts: Sendable {
        let handler: Handler
        let policy: RetryPolicy
        let deadlines: (any EffectDeadlines)?
        let executor: (any TaskExecutor)?
        let pool: EffectTaskPool?
        let clock: (any Clock<Duration>)?

        init(handler: Handler, policy: RetryPolicy, deadlines: (any EffectDeadlines)?, executor: (any TaskExecutor)?,
             pool: EffectTaskPool?, clock: (any Clock<Duration>)?) {
            self.handler = handler
            self.policy = policy
            self.deadlines = deadlines
            self.executor = executor
            self.pool = pool
            self.clock = clock
        }
    }

    /// Creates a runner; `deadlines`, when given, times out every attempt, `executor`, when
    /// given, is where runs execute (see the type's documentation and ``executor``), and
    /// `clock`, when given, is what the runs wait on (``clock``).
    ///
    /// `reusableTasks` above 0 makes runs started with ``start(preparing:sink:completion:)``
    /// share long-lived tasks: a task whose run's work returned waits for the next run's,
    /// and up to that many wait at once. A runtime that starts many short runs (a worker: one
    /// per job) saves creating and destroying a task per run. Their work then does not inherit
    /// the task-local values or the priority of the code that starts them; a task that a run
    /// cancelled is never reused. Call ``retireIdleTasks()`` when done with the runner.
    public init(handler: Handler, policy: RetryPolicy = .standard, deadlines: (any EffectDeadlines)? = nil,
                executor: (any TaskExecutor)? = nil, reusableTasks: Int = 0, clock: (any Clock<Duration>)? = nil) {
        parts = Parts(handler: handler, policy: policy, deadlines: deadlines, executor: executor,
                      pool: reusableTasks > 0 ? EffectTaskPool(executor: executor, idleLimit: reusableTasks, clock: clock) : nil,
                      clock: clock)
    }

    /// Ends the tasks kept for reuse, and each task still running when its work returns (see
    /// `reusableTasks` in ``init(handler:policy:deadlines:executor:reusableTasks:)``); runs
    /// started later get tasks of their own. Does nothing for a runner that does not reuse tasks.
    public func retireIdleTasks() {
        pool?.retireIdle()
    }

    /// Runs `effect` until it succeeds or the policy gives up, passing every emit to `sink`.
    ///
    /// Cancellation of the calling task stops the run and reports a failure.
    public func run(
        _ effect: Handler.Effect,
        sink: nonisolated(nonsending) @escaping @Sendable (_ emitIndex: UInt32, _ mutation: Handler.Mutation) async -> Void
    ) async -> EffectOutcome {
        guard deadlines != nil, policy.timeout != nil else {
            let end = await EffectClock.binding(clock) { await attempts(effect, from: 1, in: nil, sink: sink) }
            if case .ended(let outcome) = end { return outcome }
            // Only an attempt timed out by `deadlines` asks for a task of its own.
            return .failed(EffectFailure(message: "never ran", attempts: 0))
        }
        // The deadline path has one implementation: the run's own tasks, awaited here.
        let run = EffectRun(executor: executor)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                start(run, preparing: { effect }, sink: sink) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            run.cancel()
        }
    }

    /// Starts a run of an effect in a task of its own and returns at once; `completion` gets
    /// its outcome exactly once, in the run's last task.
    ///
    /// `prepare` runs first, in that task: the place for work that should stay off the caller's
    /// thread, such as decoding the effect. A failure it throws ends the run with that failure
    /// and no attempt. Cancel the run with the returned handle, not a task: see ``EffectRun``.
    public func start(
        preparing prepare: @escaping @Sendable () throws(EffectFailure) -> Handler.Effect,
        sink: nonisolated(nonsending) @escaping @Sendable (_ emitIndex: UInt32, _ mutation: Handler.Mutation) async -> Void,
        completion: @escaping @Sendable (EffectOutcome) -> Void
    ) -> EffectRun {
        let run = EffectRun(executor: executor, pool: pool)
        start(run, preparing: prepare, sink: sink, completion: completion)
        return run
    }

    private func start(
        _ run: EffectRun,
        preparing prepare: @escaping @Sendable () throws(EffectFailure) -> Handler.Effect,
        sink: nonisolated(nonsending) @escaping @Sendable (UInt32, Handler.Mutation) async -> Void,
        completion: @escaping @Sendable (EffectOutcome) -> Void
    ) {
        let runner = self
        launch(run, attemptsSoFar: 0, completion: completion) { generation in
            guard let generation else { return completion(Self.cancelled(after: 0)) }
            let effect: Handler.Effect
            do throws(EffectFailure) {
                effect = try prepare()
            } catch {
                return completion(.failed(error))
            }
            await runner.continueRun(run, effect: effect, from: 1, generation: generation, sink: sink, completion: completion)
        }
    }

    /// Runs `body` as the run's next task; a run cancelled meanwhile gets none and ends at once,
    /// after the `attemptsSoFar` it made. `body` gets the task's generation, or `nil` when the
    /// run was cancelled while its work waited for a pool's task: it then ends the run so.
    /// A run's own task binds ``clock`` here; a pool's task binds it once for all the works it
    /// runs (see ``EffectTaskPool``).
    private func launch(_ run: EffectRun, attemptsSoFar: Int, completion: @escaping @Sendable (EffectOutcome) -> Void,
                        _ body: nonisolated(nonsending) @escaping @Sendable (_ generation: UInt64?) async -> Void) {
        var body = body
        if pool == nil, let clock {
            body = { [body] generation in await EffectClock.$current.withValue(clock) { await body(generation) } }
        }
        if !run.launch(body) { completion(Self.cancelled(after: attemptsSoFar)) }
    }

    /// A run cancelled before its next attempt.
    private static func cancelled(after attempts: Int) -> EffectOutcome {
        .failed(EffectFailure(message: "cancelled", attempts: attempts))
    }

    /// Runs attempts from `first` on in the run's task of `generation`; after a timeout, goes on
    /// in a new task.
    nonisolated(nonsending) private func continueRun(
        _ run: EffectRun, effect: Handler.Effect, from first: Int, generation: UInt64,
        sink: nonisolated(nonsending) @escaping @Sendable (UInt32, Handler.Mutation) async -> Void,
        completion: @escaping @Sendable (EffectOutcome) -> Void
    ) async {
        switch await attempts(effect, from: first, in: (run, generation), sink: sink) {
        case .ended(let outcome):
            completion(outcome)
        case .timedOut(let next):
            // This task was cancelled to stop the attempt, and stays cancelled.
            let runner = self
            launch(run, attemptsSoFar: next - 1, completion: completion) { generation in
                guard let generation else { return completion(Self.cancelled(after: next - 1)) }
                await runner.continueRun(run, effect: effect, from: next, generation: generation, sink: sink, completion: completion)
            }
        }
    }

    /// How a series of attempts in one task ended.
    private enum AttemptsEnd {
        /// With the run's outcome.
        case ended(EffectOutcome)
        /// An attempt ran past its deadline and its task was cancelled; attempt `next` follows
        /// in a new task.
        case timedOut(next: Int)
    }

    /// Runs attempts `first...` in the current task. With a run (and ``deadlines`` and a
    /// timeout), each attempt runs inline and its deadline cancels the run's task.
    nonisolated(nonsending) private func attempts(
        _ effect: Handler.Effect, from first: Int, in task: (run: EffectRun, generation: UInt64)?,
        sink: nonisolated(nonsending) @escaping @Sendable (UInt32, Handler.Mutation) async -> Void
    ) async -> AttemptsEnd {
        var lastError = "never ran"
        for attempt in first...policy.maxAttempts {
            if attempt > 1 {
                do {
                    try await EffectClock.sleep(for: policy.backoff(beforeAttempt: attempt))
                } catch {
                    return .ended(Self.cancelled(after: attempt - 1))
                }
            }
            do {
                if let task, let deadlines, let timeout = policy.timeout {
                    // One object for the attempt's emit count and its race with the deadline.
                    let race = EffectAttempt(run: task.run, generation: task.generation)
                    let emitter = Emitter<Handler.Mutation>(sink: sink, attempt: race)
                    let timedOut = try await runInline(effect, emitter: emitter, attempt: race, timeout: timeout, deadlines: deadlines)
                    if timedOut {
                        let failure = EffectTimeout(timeout: timeout)
                        guard attempt < policy.maxAttempts else {
                            return .ended(.failed(EffectFailure(message: failure.description, attempts: attempt)))
                        }
                        return .timedOut(next: attempt + 1)
                    }
                    return .ended(.done(emitCount: emitter.count))
                }
                let emitter = Emitter<Handler.Mutation>(sink: sink)
                try await runAttempt(effect, emitter: emitter)
                return .ended(.done(emitCount: emitter.count))
            } catch {
                lastError = String(describing: error)
                // The run's own flag too: `EffectRun.cancel()` sets it before it cancels the
                // task, and an attempt that ended in between must not be followed by another.
                if Task.isCancelled || task?.run.isCancelled == true {
                    return .ended(Self.cancelled(after: attempt))
                }
            }
        }
        return .ended(.failed(EffectFailure(message: lastError, attempts: policy.maxAttempts)))
    }

    /// One attempt in its own task group when there is a timeout, else directly.
    nonisolated(nonsending) private func runAttempt(_ effect: Handler.Effect, emitter: Emitter<Handler.Mutation>) async throws {
        guard let timeout = policy.timeout else {
            try await handler.run(effect, emit: emitter)
            return
        }
        let handler = self.handler
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await handler.run(effect, emit: emitter) }
            group.addTask {
                try await Self.sleep(for: timeout)
                throw EffectTimeout(timeout: timeout)
            }
            defer { group.cancelAll() }
            // The first task to finish decides: the handler's result or the timeout.
            try await group.next()
        }
    }

    /// One attempt in the current task, the run's task of the attempt's generation, which
    /// `deadlines` cancels at the timeout. Returns whether the timeout came first; else the
    /// handler's result decides, and an attempt of a cancelled run fails with a cancellation
    /// error even if the handler returned (as the task-group path reports it).
    nonisolated(nonsending) private func runInline(_ effect: Handler.Effect, emitter: Emitter<Handler.Mutation>, attempt: EffectAttempt,
                                                  timeout: Duration, deadlines: any EffectDeadlines) async throws -> Bool {
        let token = deadlines.schedule(after: timeout) { attempt.timeOut() }
        let result: Result<Void, any Error>
        do {
            try await handler.run(effect, emit: emitter)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        let finishedFirst = attempt.claim(.finished)
        deadlines.cancel(token)
        guard finishedFirst else { return true }
        try result.get()
        if attempt.isRunCancelled { throw CancellationError() }
        return false
    }
}

extension EffectRunner {
    /// The longest single sleep of an attempt's timeout.
    static var timeoutStep: Duration { .milliseconds(50) }

    /// Sleeps for `duration` in steps of at most ``timeoutStep``.
    ///
    /// A cancelled `Task.sleep` keeps its timer, and the sleeping task's memory, until the
    /// deadline it was given: one 30 s sleep per attempt held about 600 bytes for 30 s after
    /// every effect that finished quickly, so a busy worker grew by hundreds of megabytes.
    /// Short steps bound what a cancelled timeout leaves behind to one step.
    static func sleep(for duration: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + duration
        while true {
            let remaining = deadline - clock.now
            if remaining <= .zero { return }
            try await Task.sleep(for: min(remaining, timeoutStep))
        }
    }
}

/// Thrown into an attempt that ran longer than its policy allows.
public struct EffectTimeout: Error, CustomStringConvertible, Sendable {
    /// The limit that was exceeded.
    public let timeout: Duration

    public var description: String { "timed out after \(timeout)" }
}
