import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing

/// The authority's job events (feed topic `job`): made only while someone follows them, with the
/// worker's name, the dispatch count and the time from dispatch to report.
@Suite struct AuthorityEngineJobEventTests {
    let writer = HeaderWriter()
    let client: [UInt8] = [0, 1, 2, 3]
    let worker = PeerID([7, 7])

    func makeEngine() -> AuthorityEngine<Counter> {
        let configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        let engine = AuthorityEngine(reactor: Counter(), configuration: configuration, logger: Logger(label: "authority", sink: .discard), journaling: false)
        engine.handleWorker([worker.bytes] + WorkerMessage.ready(name: "w-one", app: "counter", capacity: 4, kinds: []).frames(writer), now: 0)
        return engine
    }

    func send(_ action: Counter.Action, seq: UInt64, to engine: AuthorityEngine<Counter>) throws {
        engine.handleClient([client] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(action)).frames(writer), now: 0)
    }

    func fromWorker(_ message: WorkerMessage, to engine: AuthorityEngine<Counter>) {
        engine.handleWorker([worker.bytes] + message.frames(writer), now: 0)
    }

    @Test func nobodyFollowingMeansNoEvents() throws {
        let engine = makeEngine()
        try send(.countUpAsync, seq: 1, to: engine)
        fromWorker(.emit(job: JobID(actionSeq: 1, effectIndex: 0), emitIndex: 0, payload: try MessagePackEncoder().encode(Counter.Mutation.increase)), to: engine)
        fromWorker(.done(job: JobID(actionSeq: 1, effectIndex: 0), emitCount: 1), to: engine)
        let outbox = engine.takeOutbox()
        #expect(outbox.jobEvents.isEmpty)
        #expect(engine.sequencer.state.count == 1)
    }

    @Test func aFollowedJobReportsItsWorkerDispatchAndDuration() throws {
        let engine = makeEngine()
        engine.followsJobs = true
        try send(.countUpAsync, seq: 1, to: engine)
        let job = JobID(actionSeq: 1, effectIndex: 0)
        #expect(engine.takeOutbox().jobEvents == [JobEvent(.dispatched, job: job, worker: "w-one", dispatch: 1)])
        fromWorker(.emit(job: job, emitIndex: 0, payload: try MessagePackEncoder().encode(Counter.Mutation.increase)), to: engine)
        fromWorker(.done(job: job, emitCount: 1), to: engine)
        let events = engine.takeOutbox().jobEvents
        #expect(events.count == 1)
        #expect(events.first?.event == .done)
        #expect(events.first?.worker == "w-one")
        #expect(events.first?.dispatch == 1)
        #expect(events.first?.attempts == nil)
        #expect(events.first?.microseconds != nil)
        // Turning it off forgets the watch: a later job's end carries no dispatch or duration.
        try send(.countUpAsync, seq: 2, to: engine)
        engine.followsJobs = false
        engine.followsJobs = true
        _ = engine.takeOutbox()
        fromWorker(.failed(job: JobID(actionSeq: 2, effectIndex: 0), failure: EffectFailure(message: "boom", attempts: 3)), to: engine)
        #expect(engine.takeOutbox().jobEvents == [JobEvent(.failed, job: JobID(actionSeq: 2, effectIndex: 0), worker: "w-one", dispatch: 0, attempts: 3)])
    }

    @Test func jobEventsRoundTripOnTheFeed() throws {
        let events = [
            JobEvent(.dispatched, job: JobID(actionSeq: 9, effectIndex: 2), worker: "w", dispatch: 2),
            JobEvent(.done, job: JobID(actionSeq: 9, effectIndex: 2), worker: "w", dispatch: 2, microseconds: 1_234),
            JobEvent(.failed, job: JobID(actionSeq: 9, effectIndex: 2), worker: nil, dispatch: 0, attempts: 3, microseconds: nil),
            JobEvent(.cancelled, job: JobID(actionSeq: 1, effectIndex: 0), worker: nil, dispatch: 1),
        ]
        for event in events {
            let frames = FeedMessage.job(event).frames(writer)
            #expect(frames.count == 2)
            #expect(frames[0] == Array("job".utf8))
            #expect(try FeedMessage(frames: frames) == .job(event))
        }
        let unknown = [Array("job".utf8), writer.feedHeader(count: 7) { w in
            w.packUInt(1); w.packUInt(0); w.packString("exploded"); w.packNil(); w.packUInt(1); w.packNil(); w.packNil()
        }]
        #expect(throws: ProtocolError.self) { try FeedMessage(frames: unknown) }
    }
}
