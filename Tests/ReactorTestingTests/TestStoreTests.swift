import ReactorApps
import ReactorCore
import ReactorTesting
import Testing

/// What the test store accepts and, above all, what it refuses, with the exact messages.
@Suite struct TestStoreTests {
    @Test func correctExpectationsRecordNoIssue() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUp) { $0.count = 1 }
        store.send(.countUpAsync)
        #expect(store.pendingEffects == [.slowIncrease])
        store.expectEffect(.slowIncrease, emitting: [.increase])
        #expect(store.unreceivedMutations == [.increase])
        store.receive(.increase) { $0.count = 2 }
        store.send(.countUpAsync)
        await store.runEffects(with: CounterEffects())
        store.receive(.increase) { $0.count = 3 }
        store.finish()
        #expect(store.state == Counter.State(count: 3))
        #expect(store.version == 3)
        #expect(store.pendingEffects.isEmpty)
        #expect(store.unreceivedMutations.isEmpty)
    }

    @Test func aStoreStartsFromAGivenState() {
        let store = TestStore(reactor: Counter(), state: Counter.State(count: 41))
        store.send(.countUp) { $0.count = 42 }
        #expect(store.version == 1)
    }

    @Test func aWrongStateClosureFailsWithADiffOfExpectedAndActual() async {
        let store = TestStore(reactor: Counter())
        let issues = await recordedIssues {
            store.send(.countUp) { $0.count = 2 }
        }
        #expect(issues == [
            """
            State after sending countUp differs from the expectation (− expected, + actual):
              ▿ ReactorApps.Counter.State
            −   - count: 2
            +   - count: 1
            """,
        ])
        // The store goes on from the actual state.
        store.send(.countUp) { $0.count = 2 }
    }

    @Test func aMissingStateClosureMeansNoChange() async {
        let store = TestStore(reactor: Counter())
        let issues = await recordedIssues {
            store.send(.countUp)
        }
        #expect(issues.count == 1)
        #expect(issues.first?.hasSuffix("−   - count: 0\n+   - count: 1") == true)
    }

    @Test func aThrowingStateClosureFails() async {
        struct Refused: Error, CustomStringConvertible { var description: String { "refused" } }
        let store = TestStore(reactor: Counter())
        let issues = await recordedIssues {
            store.send(.countUp) { _ in throw Refused() }
        }
        #expect(issues == ["The state closure after sending countUp threw refused."])
        #expect(store.state.count == 1)
    }

    @Test func aMutationNotReceivedFailsAtFinish() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUpAsync)
        store.expectEffect(.slowIncrease, emitting: [.increase])
        let issues = await recordedIssues {
            store.finish()
        }
        #expect(issues == ["1 mutation applied but not received:\n  increase"])
        #expect(store.unreceivedMutations.isEmpty)
    }

    @Test func aMutationNotReceivedFailsAtTheNextSend() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUpAsync)
        store.expectEffect(.slowIncrease, emitting: [.increase])
        let issues = await recordedIssues {
            store.send(.countUp) { $0.count = 2 }
        }
        #expect(issues == ["Must receive every applied mutation before sending countUp; not received:\n  increase"])
    }

    @Test func anUnexpectedMutationFailsAReceive() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUp) { $0.count = 1 }
        let issues = await recordedIssues {
            store.receive(.increase) { $0.count = 2 }
        }
        #expect(issues == ["Expected to receive increase, but no mutation was applied."])
    }

    @Test func receivingTheWrongMutationFailsWithBothMutations() async {
        let store = TestStore(reactor: Primes())
        store.send(.factor(n: 6)) { $0.requested = 1 }
        store.expectEffect(.factorize(n: 6, delayMs: 0, ordered: false), emitting: [.prime(n: 6, factor: 2), .finished(n: 6)])
        let issues = await recordedIssues {
            store.receive(.prime(n: 6, factor: 3)) { $0.working = [.init(n: 6, factors: [3])] }
        }
        #expect(issues == [
            "Received a different mutation (− expected, + actual):\n− prime(n: 6, factor: 3)\n+ prime(n: 6, factor: 2)",
        ])
        // The wrong one was still taken: the next is `finished`.
        store.receive(.finished(n: 6)) {
            $0.working = []
            $0.completed = [.init(n: 6, factors: [2])]
        }
    }

    @Test func anUnhandledEffectFailsAtFinish() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUpAsync)
        store.send(.countUpAsync)
        let issues = await recordedIssues {
            store.finish()
        }
        #expect(issues == ["2 effects requested but neither stubbed nor run:\n  slowIncrease\n  slowIncrease"])
    }

    @Test func anUnhandledEffectFailsWhenTheStoreGoesAwayWithoutFinish() async {
        let issues = await recordedIssues {
            let store = TestStore(reactor: Counter())
            store.send(.countUpAsync)
        }
        #expect(issues == ["1 effect requested but neither stubbed nor run:\n  slowIncrease"])
    }

    @Test func expectingAnEffectThatWasNotRequestedFails() async {
        let store = TestStore(reactor: Primes())
        store.send(.factor(n: 4)) { $0.requested = 1 }
        let issues = await recordedIssues {
            store.expectEffect(.factorize(n: 5, delayMs: 0, ordered: false))
        }
        #expect(issues == [
            "Expected effect factorize(n: 5, delayMs: 0, ordered: false), but it is not pending. Pending effects:\n"
                + "  factorize(n: 4, delayMs: 0, ordered: false)",
        ])
        store.skipPendingEffects()
    }

    @Test func skippingAccountsForMutationsAndEffectsWithoutCheckingThem() {
        let store = TestStore(reactor: Counter())
        store.send(.countUpAsync)
        store.send(.countUpAsync)
        store.expectEffect(.slowIncrease, emitting: [.increase])
        store.skipReceivedMutations()
        store.skipPendingEffects()
        #expect(store.state.count == 1)
        store.send(.countUp) { $0.count = 2 }
    }

    @Test func predicatesMatchMutationsAndEffectsWithoutEquatable() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUpAsync)
        store.expectEffect(where: { $0 == .slowIncrease }, emitting: [.increase])
        store.receive(where: { $0 == .increase }) { $0.count = 1 }
        let issues = await recordedIssues {
            store.receive(where: { _ in true })
            store.expectEffect(where: { _ in true })
        }
        #expect(issues == [
            "Expected to receive a mutation, but none was applied.",
            "Expected an effect that was requested, but no pending effect matches. No effect is pending.",
        ])
    }
}

/// A test isolated to the main actor uses the store, effects included, without hopping off it.
@Suite struct TestStoreIsolationTests {
    @MainActor @Test func aMainActorTestRunsEffectsOnItsOwnActor() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUpAsync)
        await store.runEffects(with: CounterEffects())
        store.receive(.increase) { $0.count = 1 }
        store.finish()
    }
}
