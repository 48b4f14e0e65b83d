/// Runs one subscription for as long as its task lives: the handler again after the retry
/// policy's backoff whenever it returns or throws, each time resuming after the last event sent.
///
/// Shared by the local store and the worker node so that both treat subscriptions alike. A
/// subscription has no timeout (the policy's `timeout` and `maxAttempts` do not apply); the
/// backoff grows with each end in a row that sent no event, and starts over once one did.
public struct SubscriptionRunner<Subscription: Codable & Sendable & Hashable, Action: Codable & Sendable>: Sendable {
    /// The handler that does the work.
    public let handler: any SubscriptionHandler<Subscription, Action>
    /// Backoff between runs.
    public let policy: RetryPolicy
    /// What the handler and the backoff wait on (``EffectClock/current`` while it runs); `nil`:
    /// whatever the calling task has, a `ContinuousClock` by default.
    public let clock: (any Clock<Duration>)?

    /// Creates a runner.
    public init(handler: any SubscriptionHandler<Subscription, Action>, policy: RetryPolicy = .standard,
                clock: (any Clock<Duration>)? = nil) {
        self.handler = handler
        self.policy = policy
        self.clock = clock
    }

    /// Runs `subscription` until the calling task is cancelled, passing every event to `sink`.
    ///
    /// - Parameters:
    ///   - lastAppliedEvent: the index of the last event already applied, `nil` for none.
    ///   - ended: told about each end of the handler (the error, or `nil` when it returned) that
    ///     is followed by a restart; for logs and counters.
    public func run(
        _ subscription: Subscription, resumingAfter lastAppliedEvent: UInt64?,
        ended: @escaping @Sendable (_ error: (any Error)?) -> Void = { _ in },
        sink: @escaping @Sendable (_ index: UInt64, _ action: Action) async -> Void
    ) async {
        await EffectClock.binding(clock) { await runs(subscription, resumingAfter: lastAppliedEvent, ended: ended, sink: sink) }
    }

    /// The handler's runs, one after another, until the task is cancelled.
    private func runs(
        _ subscription: Subscription, resumingAfter lastAppliedEvent: UInt64?,
        ended: @escaping @Sendable (_ error: (any Error)?) -> Void,
        sink: @escaping @Sendable (_ index: UInt64, _ action: Action) async -> Void
    ) async {
        var after = lastAppliedEvent
        var quietEnds = 0
        while !Task.isCancelled {
            let first = after.map { $0 &+ 1 } ?? 0
            let send = SubscriptionSender<Action>(firstIndex: first, sink: sink)
            var failure: (any Error)?
            do {
                try await handler.run(subscription, resumingAfter: after, send: send)
            } catch {
                failure = error
            }
            if Task.isCancelled { return }
            if send.nextIndex > first {
                after = send.nextIndex - 1
                quietEnds = 0
            }
            quietEnds += 1
            ended(failure)
            do {
                try await EffectClock.sleep(for: policy.backoff(beforeAttempt: quietEnds + 1))
            } catch {
                return
            }
        }
    }
}
