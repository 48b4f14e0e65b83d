import ReactorApps
import Synchronization
import Testing
@testable import ReactorCore

/// The local store's cancellation: the cancelled job's task sees Swift task cancellation, and
/// whatever it emits after the cancel point never reaches the state.
@Suite struct StoreCancellationTests {
    /// What the handler saw, and a gate its stubborn searches wait at without noticing
    /// cancellation (so that they emit after the cancel point).
    final class Probe: Sendable {
        private let events = Mutex<[String]>([])
        private let gate = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func record(_ event: String) { events.withLock { $0.append(event) } }
        var recorded: [String] { events.withLock { $0 } }

        /// Waits until `open()`, whatever cancellation says.
        func waitAtGate() async {
            await withCheckedContinuation { continuation in
                let resumeNow = gate.withLock { state in
                    if state.open { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }

        func open() {
            let waiters = gate.withLock { state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Search's effects, watched: a pause records how it ended; a query starting with
    /// "stubborn" ignores cancellation at the gate and emits anyway.
    struct WatchedSearchEffects: EffectHandler {
        let probe: Probe

        func run(_ effect: Search.Effect, emit: Emitter<Search.Mutation>) async throws {
            guard case .search(let query, let pause) = effect else { return }
            await emit(.hits(query: query, results: ["\(query):1"]))
            if query.hasPrefix("stubborn") {
                await probe.waitAtGate()
                probe.record("\(query) passed the gate, cancelled: \(Task.isCancelled)")
            } else {
                do {
                    try await Task.sleep(for: .milliseconds(pause))
                } catch {
                    probe.record("\(query) saw \(type(of: error))")
                    throw error
                }
            }
            await emit(.hits(query: query, results: ["\(query):2"]))
            await emit(.finished(query: query))
            probe.record("\(query) returned")
        }
    }

    @Test func aNewSearchCancelsTheRunningOnesTaskAndOnlyItsEarlierResultsRemain() async {
        let probe = Probe()
        let store = Store(reactor: Search(), effects: WatchedSearchEffects(probe: probe), retry: .once)
        await store.send(.search(query: "a", pauseMilliseconds: 60_000))
        #expect(await eventually { await store.state.results == ["a:1"] })
        let receipt = await store.send(.search(query: "ab", pauseMilliseconds: 0))
        // The cancel mutation is applied by the send itself, after the action's own mutation.
        #expect(receipt.state.cancelled == ["a"])
        #expect(receipt.version == 4)
        #expect(await eventually { probe.recorded.contains("a saw CancellationError") })
        await store.waitUntilIdle()
        #expect(await store.state == Search.State(query: "ab", results: ["a:1", "ab:1", "ab:2"], finished: ["ab"], cancelled: ["a"]))
        #expect(await store.version == 7)
        #expect(probe.recorded.sorted() == ["a saw CancellationError", "ab returned"])
        #expect(await store.refusedEvents == 0)
    }

    @Test func emitsAfterTheCancelPointAreDropped() async {
        let probe = Probe()
        let store = Store(reactor: Search(), effects: WatchedSearchEffects(probe: probe), retry: .once)
        await store.send(.search(query: "stubborn", pauseMilliseconds: 0))
        #expect(await eventually { await store.state.results == ["stubborn:1"] })
        let receipt = await store.send(.cancel)
        #expect(receipt.state == Search.State(query: "stubborn", results: ["stubborn:1"], cancelled: ["stubborn"]))
        #expect(receipt.jobs == [])
        await store.waitUntilIdle()
        // The handler goes on past the cancel point and emits twice more: both dropped.
        probe.open()
        #expect(await eventually { probe.recorded == ["stubborn passed the gate, cancelled: true", "stubborn returned"] })
        // Each emit is awaited by the handler, so both reached the store before "returned".
        await store.send(.cancel)  // nothing left to cancel: no change
        #expect(await store.state == Search.State(query: "stubborn", results: ["stubborn:1"], cancelled: ["stubborn"]))
        #expect(await store.version == 3)
        #expect(await store.refusedEvents == 0)
    }
}
