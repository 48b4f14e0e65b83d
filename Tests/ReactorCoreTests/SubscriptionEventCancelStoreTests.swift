import Synchronization
import Testing
@testable import ReactorCore

/// In the local store, a subscription event's action cancels effects as a sent action does: the
/// cancelled effect's task sees the cancellation at once, and the store is idle without it. (It
/// once kept running until it ended on its own, its results then dropped as a spent job's.)
@Suite struct SubscriptionEventCancelStoreTests {
    /// Fetches run as effects of cancel id "fetch"; the `stops` subscription's event cancels them.
    struct Stopper: Reactor {
        enum Action: Codable, Sendable, Equatable { case fetch, watch, stop }
        enum Mutation: Codable, Sendable, Equatable { case watching, stopped, fetched, abandoned }
        enum Effect: Codable, Sendable, Equatable { case fetch }
        enum Subscription: Codable, Sendable, Hashable { case stops }
        struct State: Codable, Sendable, Equatable {
            var watching = false
            var stopped = 0
            var fetched = 0
            var abandoned = 0
        }

        var initialState: State { State() }

        func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
            switch action {
            case .fetch: Mutations(async: [.fetch])
            case .watch: [.watching]
            case .stop: Mutations(sync: [.stopped], cancel: ["fetch"])
            }
        }

        func reduce(state: inout State, mutation: Mutation) {
            switch mutation {
            case .watching: state.watching = true
            case .stopped: state.stopped += 1
            case .fetched: state.fetched += 1
            case .abandoned: state.abandoned += 1
            }
        }

        func cancelID(for effect: Effect) -> CancelID? { "fetch" }
        func cancelled(effect: Effect) -> [Mutation] { [.abandoned] }
        func subscriptions(state: State) -> [Subscription] { state.watching ? [.stops] : [] }
        func subscriptionID(of subscription: Subscription) -> String { "stops" }
    }

    /// A fetch that waits until its task is cancelled, and counts how it started and ended.
    final class Fetches: EffectHandler {
        let started = Atomic(0)
        let sawCancellation = Atomic(0)

        func run(_ effect: Stopper.Effect, emit: Emitter<Stopper.Mutation>) async throws {
            started.add(1, ordering: .relaxed)
            do {
                try await Task.sleep(for: .seconds(120))
            } catch {
                sawCancellation.add(1, ordering: .relaxed)
                throw error
            }
            await emit(.fetched)
        }
    }

    /// Sends `stop` once, when the test says so, then waits until cancelled.
    final class Stops: SubscriptionHandler {
        let go = Atomic(false)

        func run(_ subscription: Stopper.Subscription, resumingAfter lastAppliedEvent: UInt64?, send: SubscriptionSender<Stopper.Action>) async throws {
            guard lastAppliedEvent == nil else { return try await Task.sleep(for: .seconds(120)) }
            while !go.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(1)) }
            await send(.stop)
            try await Task.sleep(for: .seconds(120))
        }
    }

    @Test func anEventThatCancelsAnEffectCancelsItsTask() async {
        let fetches = Fetches(), stops = Stops()
        let store = Store(reactor: Stopper(), effects: fetches, subscriptions: stops)
        await store.send(.watch)
        await store.send(.fetch)
        #expect(await eventually { fetches.started.load(ordering: .relaxed) == 1 })
        stops.go.store(true, ordering: .relaxed)
        #expect(await eventually { fetches.sawCancellation.load(ordering: .relaxed) == 1 }, "the cancelled effect's task is cancelled")
        #expect(await store.state == Stopper.State(watching: true, stopped: 1, fetched: 0, abandoned: 1))
        await store.shutdown()
    }
}
