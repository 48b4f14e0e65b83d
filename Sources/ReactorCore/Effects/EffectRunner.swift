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
/// sleeps out the timeout. A runtime that runs many effects passes ``deadlines`` instead: the
/// attempt then runs as one task that the service cancels at its deadline, so an attempt costs
/// no timer and no second task (the worker node's per-job overhead was mostly those).
public struct EffectRunner<Handler: EffectHandler>: Sendable {
    /// The handler that does the work.
    public let handler: Handler
    /// Attempts, backoff and timeout.
    public let policy: RetryPolicy
    /// Times out attempts; `nil` gives each attempt its own sleeping timeout task.
    public let deadlines: (any EffectDeadlines)?

    /// Creates a runner; `deadlines`, when given, times out every attempt (see the type's documentation).
    public init(handler: Handler, policy: RetryPolicy = .standard, deadlines: (any EffectDeadlines)? = nil) {
        self.handler = handler
        self.policy = policy
        self.deadlines = deadlines
    }

    /// Runs `effect` until it succeeds or the policy gives up, passing every emit to `sink`.
    ///
    /// Cancellation of the calling task stops the run and reports a failure.
    public func run(
        _ effect: Handler.Effect,
        sink: @escaping @Sendable (_ emitIndex: UInt32, _ mutation: Handler.Mutation) async -> Void
    ) async -> EffectOutcome {
        var lastError = "never ran"
        for attempt in 1...policy.maxAttempts {
            if attempt > 1 {
                do {
                    try await Task.sleep(for: policy.backoff(beforeAttempt: attempt))
                } catch {
                    return .failed(EffectFailure(message: "cancelled", attempts: attempt - 1))
                }
            }
            let emitter = Emitter<Handler.Mutation>(sink: sink)
            do {
                try await runAttempt(effect, emitter: emitter)
                return .done(emitCount: emitter.count)
            } catch {
                lastError = String(describing: error)
                if Task.isCancelled {
                    return .failed(EffectFailure(message: "cancelled", attempts: attempt))
                }
            }
        }
        return .failed(EffectFailure(message: lastError, attempts: policy.maxAttempts))
    }

    private func runAttempt(_ effect: Handler.Effect, emitter: Emitter<Handler.Mutation>) async throws {
        guard let timeout = policy.timeout else {
            try await handler.run(effect, emit: emitter)
            return
        }
        if let deadlines {
            try await runAttempt(effect, emitter: emitter, timeout: timeout, deadlines: deadlines)
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

    /// One attempt as one task, cancelled by `deadlines` at its timeout or by the cancellation
    /// of the calling task. Like the task group of the default path, it returns only once the
    /// handler has returned, and the first of the three to happen decides the result: the
    /// handler's, ``EffectTimeout``, or a cancellation error.
    private func runAttempt(_ effect: Handler.Effect, emitter: Emitter<Handler.Mutation>, timeout: Duration,
                            deadlines: any EffectDeadlines) async throws {
        let handler = self.handler
        let race = AttemptRace()
        let attempt = Task {
            defer { _ = race.claim(.finished) }
            try await handler.run(effect, emit: emitter)
        }
        let token = deadlines.schedule(after: timeout) {
            if race.claim(.timedOut) { attempt.cancel() }
        }
        let result = await withTaskCancellationHandler {
            await attempt.result
        } onCancel: {
            if race.claim(.cancelled) { attempt.cancel() }
        }
        deadlines.cancel(token)
        switch race.winner {
        case .timedOut:
            throw EffectTimeout(timeout: timeout)
        case .cancelled:
            try result.get()
            throw CancellationError()
        case .finished, .none:
            try result.get()
        }
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
