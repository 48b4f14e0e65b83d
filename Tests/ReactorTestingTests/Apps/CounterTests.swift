import ReactorApps
import ReactorCore
import ReactorTesting
import Testing

/// The counter app, step by step as the authority applies it.
@Suite struct CounterTests {
    @Test func countUpAddsOneAtOnce() {
        let store = TestStore(reactor: Counter())
        store.send(.countUp) { $0.count = 1 }
        store.send(.countUp) { $0.count = 2 }
        store.finish()
        #expect(store.version == 2)
    }

    @Test func countUpAsyncAddsOneWhenItsEffectEmits() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUpAsync)
        #expect(store.pendingEffects == [.slowIncrease])
        await store.runEffects(with: CounterEffects())
        store.receive(.increase) { $0.count = 1 }
        store.finish()
    }

    @Test func syncIncreasesComeBeforeTheEffectsOfEarlierActions() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUpAsync)
        store.send(.countUpAsync)
        store.send(.countUp) { $0.count = 1 }
        await store.runEffects(with: CounterEffects())
        store.receive(.increase) { $0.count = 2 }
        store.receive(.increase) { $0.count = 3 }
        store.finish()
        #expect(store.version == 3)
    }

    @Test func aRetriedEffectsRepeatedEmitIsAppliedOnce() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUpAsync)
        await store.runEffects(with: FailsOnceAfterEmitting(), retry: RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1), timeout: nil))
        store.receive(.increase) { $0.count = 1 }
        store.finish()
        #expect(store.version == 1)
    }
}

/// Emits the increase, then throws on its first attempt only.
struct FailsOnceAfterEmitting: EffectHandler {
    struct Lost: Error {}
    let attempts = AttemptCounter()

    func run(_ effect: Counter.Effect, emit: Emitter<Counter.Mutation>) async throws {
        await emit(.increase)
        if attempts.increment() == 1 { throw Lost() }
    }
}
