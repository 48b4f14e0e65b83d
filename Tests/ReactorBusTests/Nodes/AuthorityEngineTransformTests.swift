import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing

/// The authority's side of transforms and composition, driven with plain frames: the start of a
/// fresh state, its journal record and replay, dispatch by part, projections only on change.
@Suite struct AuthorityEngineTransformTests {
    let writer = HeaderWriter()
    let client: [UInt8] = [0, 1, 2, 3]

    func makeEngine(journaling: Bool = true) -> AuthorityEngine<Shop> {
        let configuration = AuthorityConfiguration(appName: "shop", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        return AuthorityEngine(reactor: Shop(), configuration: configuration, logger: Logger(label: "test", sink: .discard), journaling: journaling)
    }

    func action(_ action: Shop.Action, seq: UInt64) throws -> [[UInt8]] {
        [client] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(action)).frames(writer)
    }

    func ready(_ peer: PeerID, kinds: [String]) -> [[UInt8]] {
        [peer.bytes] + WorkerMessage.ready(name: "w", app: "shop", capacity: 4, kinds: kinds).frames(writer)
    }

    func jobs(_ outbox: AuthorityEngine<Shop>.Outbox) throws -> [(PeerID, JobID, String)] {
        try outbox.toWorkers.compactMap { frames in
            guard case .job(let job, let kind, _) = try AuthorityToWorker(frames: Array(frames.dropFirst())) else { return nil }
            return (PeerID(frames[0]), job, kind)
        }
    }

    @Test func aFreshEngineStartsOnceAndJournalsOneStartedRecord() throws {
        let engine = makeEngine()
        #expect(engine.startIfFresh())
        #expect(!engine.startIfFresh())
        let outbox = engine.takeOutbox()
        #expect(outbox.records == [.started])
        #expect(outbox.applied.map(\.mutation.mutation) == [.opened, .detail(.shown(item: "welcome"))])
        #expect(engine.sequencer.actionSeq == 1)
        #expect(engine.sequencer.unreportedJobs.map(\.kind) == ["detail.fetch"])
        engine.handleClient(try action(.buy(item: "tea", price: 3), seq: 1), now: 0)
        #expect(engine.takeOutbox().records.count == 1)
        #expect(!engine.startIfFresh())
    }

    @Test func replayingTheJournalReproducesTheStartExactly() throws {
        let engine = makeEngine()
        engine.startIfFresh()
        engine.handleClient(try action(.buy(item: "tea", price: 3), seq: 1), now: 0)
        let records = engine.takeOutbox().records
        #expect(records.first == .started)
        let replayed = makeEngine()
        for record in records { try replayed.replay(record) }
        #expect(replayed.sequencer.state == engine.sequencer.state)
        #expect(replayed.sequencer.version == engine.sequencer.version)
        #expect(replayed.sequencer.actionSeq == 2)
        #expect(replayed.sequencer.unreportedJobs.map(\.id) == engine.sequencer.unreportedJobs.map(\.id))
        // Recovery then finds the state started: nothing is applied or journaled again.
        #expect(!replayed.startIfFresh())
        #expect(replayed.takeOutbox().records.isEmpty)
    }

    @Test func anEngineWithoutJournalStartsWithoutARecord() {
        let engine = makeEngine(journaling: false)
        #expect(engine.startIfFresh())
        #expect(engine.takeOutbox().records.isEmpty)
        #expect(engine.sequencer.state.isOpen)
    }

    @Test func aWorkerOfOnePartGetsThatPartsJobsOnly() throws {
        let engine = makeEngine()
        engine.startIfFresh()
        _ = engine.dispatchUnreportedJobs(now: 0)
        let cartWorker = PeerID([7])
        engine.handleWorker(ready(cartWorker, kinds: ["cart.*"]), now: 0)
        engine.handleClient(try action(.buy(item: "tea", price: 3), seq: 1), now: 0)
        var outbox = engine.takeOutbox()
        #expect(try jobs(outbox).map(\.2) == ["cart.charge"])
        #expect(try jobs(outbox).map(\.0) == [cartWorker])
        #expect(engine.currentMetrics().queuedJobs == 1)
        let detailWorker = PeerID([8])
        engine.handleWorker(ready(detailWorker, kinds: ["detail.*"]), now: 0)
        outbox = engine.takeOutbox()
        #expect(try jobs(outbox).map(\.1) == [JobID(actionSeq: 1, effectIndex: 0)])
        #expect(try jobs(outbox).map(\.0) == [detailWorker])
        #expect(engine.currentMetrics().queuedJobs == 0)
    }

    @Test func aProjectionIsInTheOutboxOnlyWhenWantedAndChanged() throws {
        let engine = makeEngine()
        engine.startIfFresh()
        let wanted = AuthorityEngine<Shop>.Outbox.Demand(projections: ["cart.count"])
        // The first turn with a subscriber carries the current value.
        #expect(engine.takeOutbox(wanted).projections.map(\.name) == ["cart.count"])
        engine.handleClient(try action(.detail(.show(item: "tea")), seq: 1), now: 0)
        #expect(engine.takeOutbox(wanted).projections.isEmpty)
        engine.handleClient(try action(.cart(.add(item: "tea", price: 3)), seq: 2), now: 0)
        let changed = engine.takeOutbox(wanted).projections
        #expect(changed.map { $0.name } == ["cart.count"])
        #expect(try changed.map { try MessagePackDecoder().decode(Int.self, from: $0.payload) } == [1])
        #expect(engine.takeOutbox(wanted).projections.isEmpty)
        // Unwanted: neither computed nor remembered; wanted again: the current value at once.
        engine.handleClient(try action(.cart(.add(item: "jam", price: 1)), seq: 3), now: 0)
        #expect(engine.takeOutbox().projections.isEmpty)
        #expect(try engine.takeOutbox(wanted).projections.map { try MessagePackDecoder().decode(Int.self, from: $0.payload) } == [2])
    }

    @Test func aProjectionFeedMessageRoundTripsUnderItsOwnTopic() throws {
        let message = FeedMessage.projection(name: "cart.count", version: 7, actionSeq: 3, payload: [0x02])
        let frames = message.frames(writer)
        #expect(frames[0] == Array("projection:cart.count".utf8))
        #expect(try FeedMessage(frames: frames) == message)
        #expect(throws: ProtocolError.self) { try FeedMessage(frames: Array(frames.prefix(2))) }
    }

    @Test func anAppWithoutProjectionsAndInitialValuesDoesNothingNew() {
        let configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        let engine = AuthorityEngine(reactor: Counter(), configuration: configuration, logger: Logger(label: "test", sink: .discard), journaling: true)
        #expect(!engine.startIfFresh())
        #expect(engine.projectionNames.isEmpty)
        let outbox = engine.takeOutbox(.init(projections: ["anything"]))
        #expect(outbox.records.isEmpty)
        #expect(outbox.projections.isEmpty)
        #expect(engine.sequencer.actionSeq == 0)
    }
}
