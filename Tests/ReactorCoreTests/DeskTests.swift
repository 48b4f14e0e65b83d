import ReactorApps
import Testing
@testable import ReactorCore

/// The desk app: composition, subscriptions, cancellation and transforms in one reactor.
@Suite struct DeskTests {
    let desk = Desk()

    @Test func thePartsNamesCarryTheirPrefix() {
        #expect(desk.kind(of: .lookup(.search(query: "X", pauseMilliseconds: 0))) == "lookup.search")
        #expect(desk.cancelID(for: .lookup(.search(query: "X", pauseMilliseconds: 0))) == "lookup.search")
        #expect(desk.cancelsInFlight(.lookup(.search(query: "X", pauseMilliseconds: 0))))
        #expect(desk.subscriptionID(of: .quotes(.quotes(symbol: "ACME"))) == "quotes.quotes/ACME")
        #expect(desk.subscriptionKind(of: .quotes(.quotes(symbol: "ACME"))) == "quotes.quotes")
        #expect(desk.projections.map(\.name) == ["quotes", "lookup", "board"])
    }

    @Test func aFreshDeskFollowsItsOpeningSymbolUntilItsTicksAreIn() throws {
        var sequencer = Sequencer(reactor: desk)
        let prelude = sequencer.start()
        let started = try #require(prelude)
        #expect(started.actionSeq == 1)
        #expect(started.applied.map(\.mutation) == [.quotes(.target(symbol: "ACME", ticks: 10))])
        let runs = sequencer.runningSubscriptions
        #expect(runs.map(\.id) == ["quotes.quotes/ACME"])
        #expect(runs.map(\.kind) == ["quotes.quotes"])
        #expect(runs.map(\.run) == [1])
        // Events arrive out of order and twice: each applied once, in index order.
        for index in [1, 0, 0, 2, 3, 4, 5, 6, 7, 8, 9] as [UInt64] {
            _ = try sequencer.receive(event: .quotes(.tick(symbol: "ACME", n: index)), index: index, run: 1)
        }
        #expect(sequencer.state.quotes.ticks == ["ACME": Array(0..<10)])
        #expect(sequencer.state.ticks == 10)
        #expect(sequencer.state.board == ["ACME 10/10"])
        #expect(sequencer.runningSubscriptions.isEmpty)
        let late = try sequencer.receive(event: .quotes(.tick(symbol: "ACME", n: 10)), index: 10, run: 1)
        #expect(late.disposition == .stale)
        #expect(sequencer.start()?.actionSeq == nil)
    }

    @Test func watchIsOneActionAndANewLookupCancelsTheOneInFlight() throws {
        var sequencer = Sequencer(reactor: desk)
        _ = sequencer.start()
        let first = sequencer.accept(.watch(symbol: "XYZ", ticks: 3, pauseMilliseconds: 500))
        #expect(first.actionSeq == 2)
        #expect(first.applied.map(\.mutation) == [.lookup(.queryChanged("XYZ")), .quotes(.target(symbol: "XYZ", ticks: 3))])
        #expect(first.jobs.map(\.kind) == ["lookup.search"])
        #expect(sequencer.runningSubscriptions.map(\.id) == ["quotes.quotes/ACME", "quotes.quotes/XYZ"])
        _ = try sequencer.apply(job: JobID(actionSeq: 2, effectIndex: 0), emitIndex: 0, mutation: .lookup(.hits(query: "XYZ", results: ["XYZ:1"])))
        let second = sequencer.accept(.lookup(.search(query: "XY", pauseMilliseconds: 0)))
        #expect(second.cancelled == [JobID(actionSeq: 2, effectIndex: 0)])
        #expect(second.applied.map(\.mutation) == [.lookup(.queryChanged("XY")), .lookup(.cancelled(query: "XYZ"))])
        // The cancelled lookup's late emit is dropped.
        let late = try sequencer.apply(job: JobID(actionSeq: 2, effectIndex: 0), emitIndex: 1, mutation: .lookup(.hits(query: "XYZ", results: ["XYZ:2"])))
        #expect(late.disposition == .duplicate)
        #expect(sequencer.state.lookup == Search.State(query: "XY", results: ["XYZ:1"], cancelled: ["XYZ"]))
    }

    @Test func theLocalStoreRunsTheFeedAndTheLookups() async throws {
        let store = Store(reactor: desk, effects: ComposedEffects(Desk.effects()),
                          subscriptions: ComposedSubscriptions(Desk.subscriptions(feed: TickerFeed(interval: .milliseconds(1)))))
        defer { Task { await store.shutdown() } }
        await store.send(.watch(symbol: "XYZ", ticks: 4, pauseMilliseconds: 0))
        // A minute: in a full parallel test run other tests can hold the cooperative threads for
        // many seconds; alone this takes milliseconds.
        let deadline = ContinuousClock.now + .seconds(60)
        var state = await store.state
        while (state.ticks < 14 || state.lookup.finished.isEmpty), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            state = await store.state
        }
        #expect(state.quotes.ticks == ["ACME": Array(0..<10), "XYZ": Array(0..<4)])
        #expect(state.ticks == 14)
        #expect(state.board == ["ACME 10/10", "XYZ 4/4"])
        #expect(state.lookup == Search.State(query: "XYZ", results: ["XYZ:1", "XYZ:2"], finished: ["XYZ"]))
        await store.waitUntilIdle()
        #expect(await store.runningSubscriptionCount == 0)
    }

    @Test func aPartsSubscriptionHandlerRunsItsOwnOnly() async throws {
        let handler = ComposedSubscriptions(Desk.subscriptions())
        #expect(handler.only("quotes")?.parts.map(\.name) == ["quotes"])
        #expect(handler.only("lookup") == nil)
    }
}
