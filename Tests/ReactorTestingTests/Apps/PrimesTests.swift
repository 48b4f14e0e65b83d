import ReactorApps
import ReactorCore
import ReactorTesting
import Testing

/// The primes app: effects that emit several mutations, an ordered lane, the failure hook.
@Suite struct PrimesTests {
    typealias Factorization = Primes.Factorization

    @Test func aFactorisationEmitsEachPrimeThenFinished() async {
        let store = TestStore(reactor: Primes())
        store.send(.factor(n: 12)) { $0.requested = 1 }
        await store.runEffects(with: PrimesEffects())
        store.receive(.prime(n: 12, factor: 2)) { $0.working = [Factorization(n: 12, factors: [2])] }
        store.receive(.prime(n: 12, factor: 2)) { $0.working = [Factorization(n: 12, factors: [2, 2])] }
        store.receive(.prime(n: 12, factor: 3)) { $0.working = [Factorization(n: 12, factors: [2, 2, 3])] }
        store.receive(.finished(n: 12)) {
            $0.working = []
            $0.completed = [Factorization(n: 12, factors: [2, 2, 3])]
        }
        store.finish()
        #expect(store.version == 5)
    }

    @Test func withoutALaneALaterActionsResultsComeFirstWhenItsEffectEndsFirst() {
        let store = TestStore(reactor: Primes())
        store.send(.factor(n: 7)) { $0.requested = 1 }
        store.send(.factor(n: 5)) { $0.requested = 2 }
        store.expectEffect(.factorize(n: 5, delayMs: 0, ordered: false), emitting: [.prime(n: 5, factor: 5), .finished(n: 5)])
        store.receive(.prime(n: 5, factor: 5)) { $0.working = [Factorization(n: 5, factors: [5])] }
        store.receive(.finished(n: 5)) {
            $0.working = []
            $0.completed = [Factorization(n: 5, factors: [5])]
        }
        store.expectEffect(.factorize(n: 7, delayMs: 0, ordered: false), emitting: [.prime(n: 7, factor: 7), .finished(n: 7)])
        store.receive(.prime(n: 7, factor: 7)) { $0.working = [Factorization(n: 7, factors: [7])] }
        store.receive(.finished(n: 7)) { $0.working = []; $0.completed.append(Factorization(n: 7, factors: [7])) }
        store.finish()
    }

    @Test func theOrderedLaneHoldsALaterActionsResultsUntilTheEarlierEffectEnds() async {
        let store = TestStore(reactor: Primes())
        store.send(.factorInOrder(n: 97, delayMs: 5)) { $0.requested = 1 }
        store.send(.factorInOrder(n: 10, delayMs: 0)) { $0.requested = 2 }
        // The later effect ends first: its results wait for the earlier one's.
        await store.runEffect(.factorize(n: 10, delayMs: 0, ordered: true), with: PrimesEffects())
        #expect(store.unreceivedMutations.isEmpty)
        #expect(store.state.working.isEmpty)
        await store.runEffect(.factorize(n: 97, delayMs: 5, ordered: true), with: PrimesEffects())
        store.receive(.prime(n: 97, factor: 97)) { $0.working = [Factorization(n: 97, factors: [97])] }
        store.receive(.finished(n: 97)) {
            $0.working = []
            $0.completed = [Factorization(n: 97, factors: [97])]
        }
        store.receive(.prime(n: 10, factor: 2)) { $0.working = [Factorization(n: 10, factors: [2])] }
        store.receive(.prime(n: 10, factor: 5)) { $0.working = [Factorization(n: 10, factors: [2, 5])] }
        store.receive(.finished(n: 10)) {
            $0.working = []
            $0.completed.append(Factorization(n: 10, factors: [2, 5]))
        }
        store.finish()
        #expect(store.version == 7)
    }

    @Test func aFailingEffectIsRetriedThenItsFailureMutationApplies() async {
        let store = TestStore(reactor: Primes())
        store.send(.factor(n: 0)) { $0.requested = 1 }
        await store.runEffects(with: PrimesEffects(), retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), timeout: nil))
        store.receive(.failed(n: 0, reason: "0 has no prime factorisation")) {
            $0.failures = ["0: 0 has no prime factorisation"]
        }
        store.finish()
        #expect(store.version == 2)
    }

    @Test func aFailureAfterSomeEmitsAppliesThemThenTheFailureMutation() {
        let store = TestStore(reactor: Primes())
        store.send(.factor(n: 12)) { $0.requested = 1 }
        store.expectEffect(.factorize(n: 12, delayMs: 0, ordered: false),
                           emitting: [.prime(n: 12, factor: 2)],
                           failure: EffectFailure(message: "worker lost", attempts: 3))
        store.receive(.prime(n: 12, factor: 2)) { $0.working = [Factorization(n: 12, factors: [2])] }
        store.receive(.failed(n: 12, reason: "worker lost")) {
            $0.working = []
            $0.failures = ["12: worker lost"]
        }
        store.finish()
    }

    @Test func aFailedEffectInTheLaneWaitsForTheEarlierOneToo() {
        let store = TestStore(reactor: Primes())
        store.send(.factorInOrder(n: 3, delayMs: 0)) { $0.requested = 1 }
        store.send(.factorInOrder(n: 0, delayMs: 0)) { $0.requested = 2 }
        store.expectEffect(.factorize(n: 0, delayMs: 0, ordered: true), failure: EffectFailure(message: "boom", attempts: 1))
        #expect(store.unreceivedMutations.isEmpty)
        store.expectEffect(.factorize(n: 3, delayMs: 0, ordered: true), emitting: [.prime(n: 3, factor: 3), .finished(n: 3)])
        store.receive(.prime(n: 3, factor: 3)) { $0.working = [Factorization(n: 3, factors: [3])] }
        store.receive(.finished(n: 3)) {
            $0.working = []
            $0.completed = [Factorization(n: 3, factors: [3])]
        }
        store.receive(.failed(n: 0, reason: "boom")) { $0.failures = ["0: boom"] }
        store.finish()
    }

    @Test func primeFactorsHaveMultiplicityAndAscend() {
        #expect(PrimesEffects.primeFactors(of: 360) == [2, 2, 2, 3, 3, 5])
        #expect(PrimesEffects.primeFactors(of: 97) == [97])
        #expect(PrimesEffects.primeFactors(of: 1).isEmpty)
        #expect(PrimesEffects.primeFactors(of: 0).isEmpty)
    }
}
