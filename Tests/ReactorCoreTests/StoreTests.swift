import ReactorApps
import Synchronization
import Testing
@testable import ReactorCore

/// The seeds' own scenarios (SwiftReactor's concurrency tests, ReactorSwift's subscriber test),
/// ported to the local store.
@Suite struct StoreTests {
    static let amount = 10_000

    private func makeStore() -> Store<Counter, CounterEffects> {
        Store(reactor: Counter(), effects: CounterEffects())
    }

    @Test func tenThousandConcurrentSyncActionsCountExactly() async {
        let store = makeStore()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<Self.amount {
                group.addTask { await store.send(.countUp) }
            }
        }
        #expect(await store.state.count == Self.amount)
        #expect(await store.version == UInt64(Self.amount))
    }

    @Test func tenThousandConcurrentAsyncActionsCountExactly() async {
        let store = makeStore()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<Self.amount {
                group.addTask { await store.send(.countUpAsync) }
            }
        }
        await store.waitUntilIdle()
        #expect(await store.state.count == Self.amount)
        #expect(await store.version == UInt64(Self.amount))
        #expect(await store.refusedEvents == 0)
    }

    @Test func tenThousandMixedActionsCountExactly() async {
        let store = makeStore()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<Self.amount {
                group.addTask { await store.send(index.isMultiple(of: 2) ? .countUp : .countUpAsync) }
            }
        }
        await store.waitUntilIdle()
        #expect(await store.state.count == Self.amount)
    }

    @Test func aThousandSequentialActionsCountExactly() async {
        let store = makeStore()
        for expected in 1...1_000 {
            let receipt = await store.send(.countUp)
            #expect(receipt.state.count == expected)
            #expect(receipt.actionSeq == UInt64(expected))
        }
    }

    @Test func aNewSubscriberFirstSeesTheCurrentState() async {
        let store = makeStore()
        var updates = await store.updates().makeAsyncIterator()
        #expect(await updates.next() == Snapshot(version: 0, state: Counter.State(count: 0)))
        await store.send(.countUp)
        await store.send(.countUp)
        var late = await store.updates().makeAsyncIterator()
        #expect(await late.next() == Snapshot(version: 2, state: Counter.State(count: 2)))
        #expect(await updates.next()?.version == 1)
        #expect(await updates.next()?.version == 2)
    }

    @Test func subscribersSeeAsyncResultsAfterTheSyncOnes() async {
        let store = Store(reactor: Primes(), effects: PrimesEffects())
        var updates = await store.updates().makeAsyncIterator()
        _ = await updates.next()
        let receipt = await store.send(.factor(n: 12))
        #expect(receipt.version == 1)
        #expect(receipt.state.requested == 1)
        await store.waitUntilIdle()
        #expect(await store.state.completed == [Primes.Factorization(n: 12, factors: [2, 2, 3])])
        #expect(await store.version == 5)
        var versions: [UInt64] = []
        while versions.last != 5, let next = await updates.next() { versions.append(next.version) }
        #expect(versions.first == 1)
        #expect(versions == versions.sorted())
    }

    @Test func aThousandSubscribersEachObserveTheStateTheirOwnActionProduced() async {
        let store = Store(reactor: Marks(), effects: NoEffects())
        let subscribers = 1_000
        let streams = await withTaskGroup(of: (Int, AsyncStream<Snapshot<Marks.State>>).self) { group in
            for id in 0..<subscribers {
                group.addTask { (id, await store.updates()) }
            }
            var all: [Int: AsyncStream<Snapshot<Marks.State>>] = [:]
            for await (id, stream) in group { all[id] = stream }
            return all
        }
        let observed = await withTaskGroup(of: Bool.self) { group in
            for (id, stream) in streams {
                group.addTask {
                    let receipt = await store.send(.mark(id))
                    // The subscriber must see exactly the snapshot its own action produced.
                    for await snapshot in stream where snapshot.version == receipt.version {
                        return snapshot.state.marks.contains(id) && snapshot.state == receipt.state
                    }
                    return false
                }
            }
            var count = 0
            for await ok in group where ok { count += 1 }
            return count
        }
        #expect(observed == subscribers)
        #expect(await store.state.marks.count == subscribers)
        await store.shutdown()
        #expect(await store.subscriberCount == 0)
    }

    @Test func aFailingEffectIsRetriedThenTheFailureHookApplies() async {
        let attempts = AttemptCounter()
        let store = Store(
            reactor: Marks(),
            effects: FlakyEffects(failures: 5, attempts: attempts),
            retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), timeout: nil)
        )
        await store.send(.slowMark(7))
        await store.waitUntilIdle()
        #expect(attempts.value == 3)
        #expect(await store.state.failures == ["7: flaky (after 3 attempts)"])
        // Each attempt emitted the mark before throwing: applied once, then the failure hook.
        #expect(await store.state.marks == [7])
        #expect(await store.version == 2)
    }

    @Test func aRetryThatSucceedsAppliesEachEmitOnce() async {
        let attempts = AttemptCounter()
        let store = Store(
            reactor: Marks(),
            effects: FlakyEffects(failures: 1, attempts: attempts),
            retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), timeout: nil)
        )
        await store.send(.slowMark(3))
        await store.waitUntilIdle()
        #expect(attempts.value == 2)
        // The first attempt emitted mark 3 before throwing; the retry emitted it again.
        #expect(await store.state.marks == [3])
        #expect(await store.version == 1)
    }
}

/// A reactor whose actions each leave a distinct mark.
struct Marks: Reactor {
    enum Action: Codable, Sendable { case mark(Int), slowMark(Int) }
    enum Mutation: Codable, Sendable { case mark(Int), failed(String) }
    enum Effect: Codable, Sendable { case mark(Int) }
    struct State: Codable, Sendable, Equatable {
        var marks: Set<Int> = []
        var failures: [String] = []
    }

    var initialState: State { State() }

    func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .mark(let id): [.mark(id)]
        case .slowMark(let id): Mutations(async: .mark(id))
        }
    }

    func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .mark(let id): state.marks.insert(id)
        case .failed(let why): state.failures.append(why)
        }
    }

    func failed(effect: Effect, error: EffectFailure) -> [Mutation] {
        switch effect {
        case .mark(let id): [.failed("\(id): \(error)")]
        }
    }
}

struct NoEffects: EffectHandler {
    func run(_ effect: Marks.Effect, emit: Emitter<Marks.Mutation>) async throws {}
}

/// Emits its mark, then throws for the first `failures` attempts.
struct FlakyEffects: EffectHandler {
    struct Flaky: Error, CustomStringConvertible { var description: String { "flaky" } }
    let failures: Int
    let attempts: AttemptCounter

    func run(_ effect: Marks.Effect, emit: Emitter<Marks.Mutation>) async throws {
        guard case .mark(let id) = effect else { return }
        await emit(.mark(id))
        let attempt = attempts.increment()
        if attempt <= failures { throw Flaky() }
    }
}

/// Counts attempts across tasks.
final class AttemptCounter: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    func increment() -> Int {
        count.withLock { value in
            value += 1
            return value
        }
    }
}
