import ReactorApps
import ReactorCore
import ReactorTesting
import Testing

/// The search app: a new search cancels the one in flight, `cancel` cancels it outright, and the
/// cancel hook's mutation comes with the action that cancelled.
@Suite struct SearchTests {
    @Test func aNewSearchCancelsTheOneInFlightAndOnlyItRuns() async {
        let store = TestStore(reactor: Search())
        store.send(.search(query: "a", pauseMilliseconds: 0)) { $0.query = "a" }
        store.send(.search(query: "ab", pauseMilliseconds: 0)) {
            $0.query = "ab"
            $0.cancelled = ["a"]
        }
        #expect(store.pendingEffects == [.search(query: "ab", pauseMilliseconds: 0)])
        await store.runEffects(with: SearchEffects())
        store.receive(.hits(query: "ab", results: ["ab:1"])) { $0.results = ["ab:1"] }
        store.receive(.hits(query: "ab", results: ["ab:2"])) { $0.results = ["ab:1", "ab:2"] }
        store.receive(.finished(query: "ab")) { $0.finished = ["ab"] }
        store.finish()
        #expect(store.version == 6)
    }

    @Test func aSearchThatPausesRunsAtOnceOnAnImmediateClock() async {
        let store = TestStore(reactor: Search())
        // Ten minutes between its two pages: the test's clock lets no real time pass.
        store.send(.search(query: "q", pauseMilliseconds: 600_000)) { $0.query = "q" }
        let clock = ImmediateClock()
        let start = clock.now
        await store.runEffects(with: SearchEffects(), clock: clock)
        store.receive(.hits(query: "q", results: ["q:1"])) { $0.results = ["q:1"] }
        store.receive(.hits(query: "q", results: ["q:2"])) { $0.results = ["q:1", "q:2"] }
        store.receive(.finished(query: "q")) { $0.finished = ["q"] }
        store.finish()
        #expect(clock.sleeps == [.seconds(600)])
        #expect(clock.now - start == .seconds(600))
    }

    @Test func cancelStopsTheSearchAndDoesNothingOnceItEnded() {
        let store = TestStore(reactor: Search())
        store.send(.cancel)
        store.send(.search(query: "q", pauseMilliseconds: 0)) { $0.query = "q" }
        store.send(.cancel) { $0.cancelled = ["q"] }
        #expect(store.pendingEffects == [])
        store.send(.search(query: "r", pauseMilliseconds: 0)) { $0.query = "r" }
        store.expectEffect(.search(query: "r", pauseMilliseconds: 0), emitting: [.finished(query: "r")])
        store.receive(.finished(query: "r")) { $0.finished = ["r"] }
        store.send(.cancel)
        store.finish()
        #expect(store.version == 4)
    }
}
