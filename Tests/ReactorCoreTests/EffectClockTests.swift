import ReactorApps
import ReactorTesting
import Synchronization
import Testing
@testable import ReactorCore

/// `EffectClock.current` is the clock an ``EffectRunner`` was given, in every way a run can
/// start (inline, in a task of its own, in a pool's reused task) and for the backoff between
/// attempts; without one it is a `ContinuousClock`. The clock here (`ImmediateClock`, from
/// ReactorTesting) never waits: it notes each sleep and moves its time on.
@Suite struct EffectClockTests {
    /// Emits 1 when ``EffectClock/current`` is `clock` (0 otherwise), sleeps `pause` on it, then
    /// emits 2; fails the attempts listed in `failing` before anything.
    struct Probe: EffectHandler {
        let clock: ImmediateClock?
        var pause: Duration = .seconds(30)
        var failing: Set<Int> = []
        let attempts = Attempts()

        final class Attempts: Sendable {
            private let count = Mutex(0)
            func next() -> Int { count.withLock { $0 += 1; return $0 } }
        }

        struct Failure: Error {}

        func run(_ effect: Int, emit: Emitter<Int>) async throws {
            if failing.contains(attempts.next()) { throw Failure() }
            let current = EffectClock.current
            await emit(clock.map { (current as? ImmediateClock) === $0 } == true ? 1 : 0)
            try await EffectClock.sleep(for: pause)
            await emit(2)
        }
    }

    final class Sink: Sendable {
        private let values = Mutex<[UInt32: Int]>([:])
        func callAsFunction(_ index: UInt32, _ value: Int) { values.withLock { $0[index] = value } }
        var received: [UInt32: Int] { values.withLock { $0 } }
    }

    @Test func aRunInTheCallersTaskWaitsOnTheRunnersClock() async {
        let clock = ImmediateClock()
        let sink = Sink()
        let outcome = await EffectRunner(handler: Probe(clock: clock), policy: .once, clock: clock).run(0) { sink($0, $1) }
        #expect(outcome == .done(emitCount: 2))
        #expect(sink.received == [0: 1, 1: 2])
        #expect(clock.sleeps == [.seconds(30)])
    }

    @Test(arguments: [0, 4])
    func aRunStartedInATaskOfItsOwnOrAPoolsWaitsOnTheRunnersClock(reusableTasks: Int) async {
        let clock = ImmediateClock()
        let sink = Sink()
        let outcomes = Mutex<[EffectOutcome]>([])
        let runner = EffectRunner(handler: Probe(clock: clock), policy: .once, reusableTasks: reusableTasks, clock: clock)
        defer { runner.retireIdleTasks() }
        for effect in 0..<3 {
            _ = runner.start(preparing: { effect }, sink: { sink($0, $1) }, completion: { outcome in outcomes.withLock { $0.append(outcome) } })
            #expect(await eventually { outcomes.withLock { $0.count } == effect + 1 })
        }
        #expect(outcomes.withLock { $0 } == Array(repeating: .done(emitCount: 2), count: 3))
        #expect(sink.received == [0: 1, 1: 2])
        #expect(clock.sleeps == Array(repeating: .seconds(30), count: 3))
    }

    @Test func theBackoffBetweenAttemptsIsTheRunnersClocksToo() async {
        let clock = ImmediateClock()
        let policy = RetryPolicy(maxAttempts: 3, initialBackoff: .seconds(10), maxBackoff: .seconds(60))
        let outcome = await EffectRunner(handler: Probe(clock: clock, pause: .seconds(1), failing: [1, 2]), policy: policy, clock: clock)
            .run(0) { _, _ in }
        #expect(outcome == .done(emitCount: 2))
        // Before attempt 2, before attempt 3, then the effect's own pause.
        #expect(clock.sleeps == [.seconds(10), .seconds(20), .seconds(1)])
    }

    @Test func withoutAClockEffectsWaitOnTheContinuousClock() async {
        let sink = Sink()
        let outcome = await EffectRunner(handler: Probe(clock: nil, pause: .milliseconds(1)), policy: .once).run(0) { sink($0, $1) }
        #expect(outcome == .done(emitCount: 2))
        #expect(sink.received == [0: 0, 1: 2])
        #expect(EffectClock.current is ContinuousClock)
    }

    @Test func aStoresEffectsWaitOnTheClockItWasGiven() async {
        let clock = ImmediateClock()
        // A minute per effect on the system clock; on the test's clock, no wait at all.
        let store = Store(reactor: Counter(), effects: CounterEffects(delay: .seconds(60)), clock: clock)
        await store.send(.countUpAsync)
        await store.send(.countUpAsync)
        await store.waitUntilIdle()
        #expect(await store.state.count == 2)
        #expect(clock.sleeps == [.seconds(60), .seconds(60)])
    }

    @Test func aSubscriptionAndItsBackoffWaitOnTheRunnersClock() async {
        /// Sleeps 5 s, sends one event, returns: the runner starts it again after its backoff.
        /// From the fourth run on it waits on the system clock until cancelled, so that the test's
        /// clock, which never waits, does not turn the runner into a busy loop.
        struct Pulse: SubscriptionHandler {
            func run(_ subscription: Int, resumingAfter lastAppliedEvent: UInt64?, send: SubscriptionSender<Int>) async throws {
                if send.nextIndex >= 3 { try await ContinuousClock().sleep(for: .seconds(600)) }
                try await EffectClock.sleep(for: .seconds(5))
                await send(subscription)
            }
        }
        let clock = ImmediateClock()
        let runner = SubscriptionRunner<Int, Int>(handler: Pulse(), policy: RetryPolicy(maxAttempts: 3, initialBackoff: .seconds(1)), clock: clock)
        let events = Mutex<[UInt64]>([])
        let task = Task { await runner.run(7, resumingAfter: nil) { index, _ in events.withLock { $0.append(index) } } }
        #expect(await eventually { events.withLock { $0.count } >= 3 })
        task.cancel()
        await task.value
        #expect(events.withLock { $0 } == [0, 1, 2])
        // The handler's pause, then the backoff after a run that sent an event, each time.
        #expect(clock.sleeps == [.seconds(5), .seconds(1), .seconds(5), .seconds(1), .seconds(5), .seconds(1)])
    }

    @Test func aTestCanBindItsOwnClockAroundCodeThatSleeps() async throws {
        let clock = ImmediateClock()
        try await EffectClock.$current.withValue(clock) {
            try await EffectClock.sleep(for: .seconds(3_600))
        }
        #expect(clock.sleeps == [.seconds(3_600)])
        #expect(EffectClock.current is ContinuousClock)
    }
}
