import ReactorApps
import ReactorCore
import ReactorTesting
import Testing

/// The desk app tested exhaustively: its initial action, its subscriptions (their events sent as
/// the actions they are), the expansion of `watch` and the cancellation of a lookup in flight.
@Suite struct DeskTestStoreTests {
    @Test func theWholeDeskStepByStep() async {
        let store = TestStore(reactor: Desk())
        #expect(store.runningSubscriptions.isEmpty)
        store.start { $0.quotes.targets = ["ACME": 10]; $0.board = ["ACME 0/10"] }
        #expect(store.runningSubscriptions == [.quotes(.quotes(symbol: "ACME"))])
        store.send(.quotes(.tick(symbol: "ACME", n: 0))) {
            $0.quotes.ticks = ["ACME": [0]]
            $0.ticks = 1
            $0.board = ["ACME 1/10"]
        }
        store.send(.watch(symbol: "XYZ", ticks: 1, pauseMilliseconds: 0)) {
            $0.lookup.query = "XYZ"
            $0.quotes.targets["XYZ"] = 1
            $0.board = ["ACME 1/10", "XYZ 0/1"]
        }
        #expect(store.runningSubscriptions == [.quotes(.quotes(symbol: "ACME")), .quotes(.quotes(symbol: "XYZ"))])
        #expect(store.pendingEffects == [.lookup(.search(query: "XYZ", pauseMilliseconds: 0))])
        // A new lookup replaces the one in flight: its cancel hook is part of this action.
        store.send(.lookup(.search(query: "XY", pauseMilliseconds: 0))) {
            $0.lookup.query = "XY"
            $0.lookup.cancelled = ["XYZ"]
        }
        #expect(store.pendingEffects == [.lookup(.search(query: "XY", pauseMilliseconds: 0))])
        await store.runEffects(with: ComposedEffects(Desk.effects()))
        store.receive(.lookup(.hits(query: "XY", results: ["XY:1"]))) { $0.lookup.results = ["XY:1"] }
        store.receive(.lookup(.hits(query: "XY", results: ["XY:2"]))) { $0.lookup.results = ["XY:1", "XY:2"] }
        store.receive(.lookup(.finished(query: "XY"))) { $0.lookup.finished = ["XY"] }
        store.send(.quotes(.tick(symbol: "XYZ", n: 0))) {
            $0.quotes.ticks["XYZ"] = [0]
            $0.ticks = 2
            $0.board = ["ACME 1/10", "XYZ 1/1"]
        }
        #expect(store.runningSubscriptions == [.quotes(.quotes(symbol: "ACME"))])
        store.finish()
    }

    @Test func startingAReactorWithoutInitialValuesChangesNothing() {
        let store = TestStore(reactor: Counter())
        store.start()
        #expect(store.version == 0)
        store.finish()
    }
}
