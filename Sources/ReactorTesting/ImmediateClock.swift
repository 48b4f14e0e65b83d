import Synchronization

/// A clock whose sleeps end at once, its time moved on to their deadline: for tests of effects
/// and subscriptions that wait (a debounce, a poll interval, a retry's backoff) without waiting.
///
/// ```swift
/// let clock = ImmediateClock()
/// store.send(.search(query: "q", pauseMilliseconds: 300)) { $0.query = "q" }
/// await store.runEffects(with: SearchEffects(), clock: clock)
/// #expect(clock.sleeps == [.milliseconds(300)])
/// ```
///
/// Effects wait on it when they wait through `EffectClock`; hand it to a `Store`, an
/// `EffectRunner` or a `SubscriptionRunner` as their `clock`, or bind it around any code with
/// `EffectClock.$current.withValue(clock) { ... }`. Each sleep is a suspension point, as a real
/// one is, and a cancelled task's sleep throws `CancellationError`. Safe to share between tasks.
public final class ImmediateClock: Clock, Sendable {
    public typealias Instant = ContinuousClock.Instant

    private let state: Mutex<(now: Instant, sleeps: [Duration])>

    /// A clock whose time starts at `now`.
    public init(now: Instant = .now) {
        state = Mutex((now, []))
    }

    /// The clock's time: where it started, moved on by every sleep.
    public var now: Instant { state.withLock { $0.now } }

    public var minimumResolution: Duration { .zero }

    /// How long each sleep would have waited, in the order they were asked for (a deadline
    /// already past counts as zero).
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Ends at once, after moving the time on to `deadline` (if it is later).
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.sleeps.append(max(.zero, state.now.duration(to: deadline)))
            state.now = max(state.now, deadline)
        }
        await Task.yield()
    }
}
