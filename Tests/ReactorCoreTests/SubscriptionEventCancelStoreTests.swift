import ReactorFixtures
import Synchronization
import Testing
@testable import ReactorCore

/// In the local store, a subscription event's action cancels effects as a sent action does: the
/// cancelled effect's task sees the cancellation at once, and the store is idle without it. (It
/// once kept running until it ended on its own, its results then dropped as a spent job's.)
@Suite struct SubscriptionEventCancelStoreTests {
    /// Waits until the task is cancelled (a stream nobody finishes ends then), then throws.
    static func untilCancelled() async throws {
        let (wait, keep) = AsyncStream<Void>.makeStream()
        for await _ in wait {}
        keep.finish()
        throw CancellationError()
    }

    /// A fetch that waits until its task is cancelled, and counts how it started and ended.
    final class Fetches: EffectHandler {
        let started = Atomic(0)
        let sawCancellation = Atomic(0)

        func run(_ effect: StoppableFetches.Effect, emit: Emitter<StoppableFetches.Mutation>) async throws {
            started.add(1, ordering: .relaxed)
            do {
                try await untilCancelled()
            } catch {
                sawCancellation.add(1, ordering: .relaxed)
                throw error
            }
        }
    }

    /// Sends `stop` once the test opens `go`, then waits until cancelled.
    final class Stops: SubscriptionHandler {
        let (go, open) = AsyncStream<Void>.makeStream()

        func run(_ subscription: StoppableFetches.Subscription, resumingAfter lastAppliedEvent: UInt64?,
                 send: SubscriptionSender<StoppableFetches.Action>) async throws {
            if lastAppliedEvent == nil {
                // Ends when the test opens it, or at once when the task is cancelled.
                for await _ in go {}
                try Task.checkCancellation()
                await send(.stop)
            }
            try await untilCancelled()
        }
    }

    @Test func anEventThatCancelsAnEffectCancelsItsTask() async {
        let fetches = Fetches(), stops = Stops()
        let store = Store(reactor: StoppableFetches(), effects: fetches, subscriptions: stops)
        await store.send(.watch)
        await store.send(.fetch)
        #expect(await eventually { fetches.started.load(ordering: .relaxed) == 1 })
        stops.open.finish()
        #expect(await eventually { fetches.sawCancellation.load(ordering: .relaxed) == 1 }, "the cancelled effect's task is cancelled")
        #expect(await store.state == StoppableFetches.State(watching: true, stopped: 1, fetched: 0, abandoned: 1))
        await store.shutdown()
    }
}
