import ReactorCore
import Synchronization

/// A clock that moves only when the test moves it: for tests of a `Store` (or any code that
/// waits through `EffectClock`) that check what happens while an effect waits, and after.
///
/// ```swift
/// let clock = TestClock()
/// let store = Store(reactor: Search(), effects: SearchEffects(), clock: clock)
/// await store.send(.search(query: "q", pauseMilliseconds: 300))
/// #expect(await clock.waitForSleeps(1))           // the effect waits now, its first page in
/// clock.advance(by: .milliseconds(299))           // not yet
/// clock.advance(by: .milliseconds(1))             // its second page comes
/// await store.waitUntilIdle()
/// ```
///
/// A sleep ends when ``advance(by:)`` moves the time to or past its deadline, sleeps that end
/// together in deadline order, then in the order they began; a cancelled task's sleep ends at
/// once with `CancellationError`. ``advance(by:)`` resumes the sleeps and returns: their code
/// runs on its own executor after that, so wait for what it does (`waitUntilIdle()`, another
/// ``waitForSleeps(_:within:)``) before checking it. With `TestStore`, which runs an effect to
/// its end, use an ``ImmediateClock`` instead.
public final class TestClock: Clock, Sendable {
    public typealias Instant = ContinuousClock.Instant

    private let time: Mutex<Instant>
    private let sleeps = SleepQueue()

    /// A clock whose time starts at `now` and stands still until advanced.
    public init(now: Instant = .now) {
        time = Mutex(now)
    }

    /// The clock's time: where it started, moved on by ``advance(by:)``.
    public var now: Instant { time.withLock { $0 } }

    public var minimumResolution: Duration { .zero }

    /// Waits until the clock has been advanced to `deadline` (at once if it has).
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        // An advance between reading the time and the sleep's entry into the heap passed it by:
        // once in, a sleep that is due already ends at once.
        _ = try await sleeps.wait(until: deadline, now: now) { _ in sleeps.resume(dueBy: { now }) }
    }

    /// Sleeps that wait now.
    public var pendingSleeps: Int { sleeps.sleeping }

    /// Moves the time on by `duration` and resumes every sleep due by then.
    public func advance(by duration: Duration) {
        let now = time.withLock { time in
            time += max(.zero, duration)
            return time
        }
        sleeps.resume(dueBy: { now })
    }

    /// Waits (on the system clock, checking every millisecond) until at least `count` sleeps
    /// wait on this clock, for at most `timeout`; returns whether they do.
    public func waitForSleeps(_ count: Int, within timeout: Duration = .seconds(10)) async -> Bool {
        let system = ContinuousClock()
        let deadline = system.now + timeout
        while pendingSleeps < count {
            guard system.now < deadline, (try? await system.sleep(for: .milliseconds(1))) != nil else {
                return pendingSleeps >= count
            }
        }
        return true
    }
}
