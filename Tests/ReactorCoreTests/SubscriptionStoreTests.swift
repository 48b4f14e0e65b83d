import ReactorApps
import Synchronization
import Testing
@testable import ReactorCore

/// The local store runs the ticker's subscriptions: every tick applied exactly once and in
/// order, handlers that end or throw resumed after their last event, and runs that leave the
/// state cancelled.
@Suite struct SubscriptionStoreTests {
    private static let fast = RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(5), timeout: nil)

    @Test func everyTickIsAppliedOnceInOrderAndTheRunEndsWithItsTarget() async {
        let store = Store(reactor: Ticker(), effects: TickerEffects(), subscriptions: TickerFeed(interval: .milliseconds(1)), retry: Self.fast)
        await store.send(.follow(symbol: "ACME", ticks: 40))
        await store.send(.follow(symbol: "BETA", ticks: 25))
        #expect(await eventually {
            let count = await store.state.ticks.values.map(\.count).reduce(0, +)
            return await store.runningSubscriptionCount == 0 && count == 65
        })
        #expect(await store.state.ticks == ["ACME": Array(0..<40), "BETA": Array(0..<25)])
        #expect(await store.version == 67)
        #expect(await store.refusedEvents == 0)
        await store.shutdown()
    }

    @Test func theInitialStatesSubscriptionsRunWithoutAnAction() async {
        struct Preset: Reactor {
            typealias Action = Ticker.Action
            typealias Mutation = Ticker.Mutation
            typealias Effect = Ticker.Effect
            typealias Subscription = Ticker.Subscription
            typealias State = Ticker.State
            let ticker = Ticker()
            var initialState: State { State(targets: ["ACME": 5]) }
            func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> { ticker.mutate(state: state, action: action) }
            func reduce(state: inout State, mutation: Mutation) { ticker.reduce(state: &state, mutation: mutation) }
            func subscriptions(state: State) -> [Subscription] { ticker.subscriptions(state: state) }
        }
        let store = Store(reactor: Preset(), effects: TickerEffects(), subscriptions: TickerFeed(interval: .milliseconds(1)), retry: Self.fast)
        #expect(await eventually { await store.state.ticks["ACME"]?.count == 5 })
        #expect(await eventually { await store.runningSubscriptionCount == 0 })
        #expect(await store.state.ticks == ["ACME": Array(0..<5)])
        await store.shutdown()
    }

    /// Sends three ticks, then throws (every second run) or returns: the runner starts it again
    /// after its last event, so no tick is lost or doubled.
    final class Flaky: SubscriptionHandler {
        let runs = Mutex<[UInt64?]>([])

        func run(_ subscription: Ticker.Subscription, resumingAfter lastAppliedEvent: UInt64?, send: SubscriptionSender<Ticker.Action>) async throws {
            let count = runs.withLock { runs in
                runs.append(lastAppliedEvent)
                return runs.count
            }
            guard case .quotes(let symbol) = subscription else { return }
            for _ in 0..<3 { await send(.tick(symbol: symbol, n: send.nextIndex)) }
            if count.isMultiple(of: 2) { throw CancellationError() }
        }
    }

    @Test func aHandlerThatEndsOrThrowsResumesAfterItsLastEvent() async {
        let flaky = Flaky()
        let store = Store(reactor: Ticker(), effects: TickerEffects(), subscriptions: flaky, retry: Self.fast)
        await store.send(.follow(symbol: "ACME", ticks: 12))
        #expect(await eventually { await store.runningSubscriptionCount == 0 })
        #expect(await store.state.ticks == ["ACME": Array(0..<12)])
        #expect(flaky.runs.withLock { Array($0.prefix(4)) } == [nil, 2, 5, 8])
        await store.shutdown()
    }

    /// Runs until cancelled and says so.
    final class Endless: SubscriptionHandler {
        let cancelled = Mutex(0)

        func run(_ subscription: Ticker.Subscription, resumingAfter lastAppliedEvent: UInt64?, send: SubscriptionSender<Ticker.Action>) async throws {
            guard case .quotes(let symbol) = subscription else { return }
            do {
                while true {
                    try await Task.sleep(for: .milliseconds(1))
                    await send(.tick(symbol: symbol, n: send.nextIndex))
                }
            } catch {
                cancelled.withLock { $0 += 1 }
                throw error
            }
        }
    }

    @Test func aRunThatLeavesTheStateIsCancelledAndItsLateEventsAreDropped() async {
        let handler = Endless()
        let store = Store(reactor: Ticker(), effects: TickerEffects(), subscriptions: handler, retry: Self.fast)
        await store.send(.follow(symbol: "ACME", ticks: 1_000_000))
        #expect(await eventually { await (store.state.ticks["ACME"]?.count ?? 0) >= 5 })
        await store.send(.unfollow(symbol: "ACME"))
        #expect(await store.runningSubscriptionCount == 0)
        #expect(await eventually { handler.cancelled.withLock { $0 } == 1 })
        let ticks = await store.state.ticks["ACME"] ?? []
        #expect(ticks == Array(0..<UInt64(ticks.count)))
        // Coming back is a new run: it starts at index 0 again.
        await store.send(.follow(symbol: "ACME", ticks: UInt64(ticks.count) + 3))
        #expect(await eventually { await store.runningSubscriptionCount == 0 })
        #expect(await store.state.ticks["ACME"] == ticks + [0, 1, 2])
        await store.shutdown()
    }
}
