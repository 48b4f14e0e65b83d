import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing

/// The authority's engine places the ticker's subscription runs on workers that serve them,
/// moves a run when its worker leaves, applies events exactly once from the run's owner only,
/// and journals them so that replay reproduces state and runs.
@Suite struct AuthorityEngineSubscriptionTests {
    let writer = HeaderWriter()
    let client: [UInt8] = [0, 1, 2, 3]
    let first = PeerID([1, 1])
    let second = PeerID([2, 2])

    func makeEngine() -> AuthorityEngine<Ticker> {
        let configuration = AuthorityConfiguration(appName: "ticker", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        return AuthorityEngine(reactor: Ticker(), configuration: configuration, logger: Logger(label: "authority", sink: .discard), journaling: true)
    }

    func send(_ action: Ticker.Action, seq: UInt64, to engine: AuthorityEngine<Ticker>) throws {
        engine.handleClient([client] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(action)).frames(writer), now: 0)
    }

    func fromWorker(_ peer: PeerID, _ message: WorkerMessage, to engine: AuthorityEngine<Ticker>) {
        engine.handleWorker([peer.bytes] + message.frames(writer), now: 0)
    }

    func tick(_ peer: PeerID, run: UInt64, index: UInt64, to engine: AuthorityEngine<Ticker>) throws {
        let payload = try MessagePackEncoder().encode(Ticker.Action.tick(symbol: "ACME", n: index))
        fromWorker(peer, .event(run: run, index: index, payload: payload), to: engine)
    }

    /// The subscription messages an outbox sends, with their worker.
    func subscriptionMessages(_ outbox: AuthorityEngine<Ticker>.Outbox) throws -> [(PeerID, AuthorityToWorker)] {
        try outbox.toWorkers.compactMap { frames in
            let message = try AuthorityToWorker(frames: Array(frames.dropFirst()))
            switch message {
            case .subscribe(_, _, _, _, _), .unsubscribe: return (PeerID(frames[0]), message)
            default: return nil
            }
        }
    }

    @Test func runsGoToServingWorkersMoveWhenTheirWorkerLeavesAndApplyEventsOnce() throws {
        let engine = makeEngine()
        var records: [AuthorityRecord] = []
        let payload = try MessagePackEncoder().encode(Ticker.Subscription.quotes(symbol: "ACME"))
        fromWorker(first, .ready(name: "first", app: "ticker", capacity: 1, kinds: []), to: engine)
        try send(.follow(symbol: "ACME", ticks: 5), seq: 1, to: engine)
        var outbox = engine.takeOutbox()
        records += outbox.records
        // A worker that has not said `subscriber` gets no run; one for other kinds neither.
        #expect(try subscriptionMessages(outbox).isEmpty)
        #expect(engine.currentMetrics().subscriptionsRunning == 1)
        #expect(engine.currentMetrics().subscriptionsUnassigned == 1)
        fromWorker(second, .ready(name: "second", app: "ticker", capacity: 1, kinds: []), to: engine)
        fromWorker(second, .subscriber(kinds: ["orders"]), to: engine)
        #expect(try subscriptionMessages(engine.takeOutbox()).isEmpty)

        fromWorker(first, .subscriber(kinds: []), to: engine)
        outbox = engine.takeOutbox()
        #expect(try subscriptionMessages(outbox).map(\.0) == [first])
        #expect(try subscriptionMessages(outbox).map(\.1) == [.subscribe(run: 1, id: "quotes/ACME", kind: "quotes", after: nil, payload: payload)])
        #expect(engine.currentMetrics().subscriptionsUnassigned == 0)

        try tick(first, run: 1, index: 0, to: engine)
        try tick(first, run: 1, index: 1, to: engine)
        try tick(first, run: 1, index: 0, to: engine)
        try tick(second, run: 1, index: 2, to: engine)
        outbox = engine.takeOutbox()
        records += outbox.records
        #expect(engine.metrics[.subscriptionEventsApplied] == 2)
        #expect(engine.metrics[.subscriptionEventsDuplicate] == 1)
        #expect(engine.metrics[.subscriptionEventsStale] == 1)
        #expect(outbox.records == [.subscriptionEvent(run: 1, index: 0, action: try MessagePackEncoder().encode(Ticker.Action.tick(symbol: "ACME", n: 0))),
                                   .subscriptionEvent(run: 1, index: 1, action: try MessagePackEncoder().encode(Ticker.Action.tick(symbol: "ACME", n: 1)))])

        // The first worker leaves: the run moves to the second (once it serves every kind), after event 1.
        fromWorker(second, .subscriber(kinds: []), to: engine)
        fromWorker(first, .bye, to: engine)
        outbox = engine.takeOutbox()
        #expect(try subscriptionMessages(outbox).map(\.0) == [second])
        #expect(try subscriptionMessages(outbox).map(\.1) == [.subscribe(run: 1, id: "quotes/ACME", kind: "quotes", after: 1, payload: payload)])
        #expect(engine.metrics[.subscriptionRestarts] == 1)
        #expect(engine.metrics[.subscriptionsAssigned] == 2)

        for index: UInt64 in 1...4 { try tick(second, run: 1, index: index, to: engine) }
        outbox = engine.takeOutbox()
        records += outbox.records
        // The fifth tick ends the run: the worker is told to stop it.
        #expect(try subscriptionMessages(outbox).map(\.1) == [.unsubscribe(run: 1)])
        #expect(engine.sequencer.state.ticks == ["ACME": [0, 1, 2, 3, 4]])
        #expect(engine.sequencer.version == 6)
        #expect(engine.metrics[.subscriptionEventsDuplicate] == 2)
        #expect(engine.currentMetrics().subscriptionsRunning == 0)
        try tick(second, run: 1, index: 5, to: engine)
        #expect(engine.metrics[.subscriptionEventsStale] == 2)

        // Replaying the journal records gives the same state and ends with no run.
        let replayed = makeEngine()
        for record in records { try replayed.replay(record) }
        #expect(replayed.sequencer.state == engine.sequencer.state)
        #expect(replayed.sequencer.version == engine.sequencer.version)
        #expect(replayed.sequencer.actionSeq == engine.sequencer.actionSeq)
        #expect(replayed.sequencer.runningSubscriptions.isEmpty)
    }

    @Test func aRecoveredEngineResumesRunsAfterTheLastJournaledEvent() throws {
        let engine = makeEngine()
        var records: [AuthorityRecord] = []
        fromWorker(first, .ready(name: "first", app: "ticker", capacity: 1, kinds: []), to: engine)
        fromWorker(first, .subscriber(kinds: ["quotes"]), to: engine)
        try send(.follow(symbol: "ACME", ticks: 10), seq: 1, to: engine)
        records += engine.takeOutbox().records
        for index: UInt64 in [0, 1, 2, 4] { try tick(first, run: 1, index: index, to: engine) }
        records += engine.takeOutbox().records
        #expect(records.count == 5)

        let recovered = makeEngine()
        for record in records { try recovered.replay(record) }
        #expect(recovered.sequencer.state.ticks == ["ACME": [0, 1, 2]])
        #expect(recovered.sequencer.runningSubscriptions.map(\.lastAppliedEvent) == [2])
        fromWorker(second, .ready(name: "second", app: "ticker", capacity: 1, kinds: []), to: recovered)
        fromWorker(second, .subscriber(kinds: []), to: recovered)
        let payload = try MessagePackEncoder().encode(Ticker.Subscription.quotes(symbol: "ACME"))
        #expect(try subscriptionMessages(recovered.takeOutbox()).map(\.1) == [.subscribe(run: 1, id: "quotes/ACME", kind: "quotes", after: 2, payload: payload)])
        // The buffered event 4 survived the replay: event 3 releases it.
        #expect(recovered.metrics[.subscriptionRestarts] == 0)
        try tick(second, run: 1, index: 4, to: recovered)
        try tick(second, run: 1, index: 3, to: recovered)
        #expect(recovered.sequencer.state.ticks == ["ACME": [0, 1, 2, 3, 4]])
        #expect(recovered.metrics[.subscriptionEventsDuplicate] == 1)
    }
}
