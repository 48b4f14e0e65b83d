import MessagePack
@testable import ReactorBus
import ReactorCore
import ReactorFixtures
import ReactorLog
import ReactorWire
import Testing

/// A subscription event's action cancels jobs as a client's action does: the cancelled jobs
/// leave the dispatch queue or are cancelled on their worker, their actions end and free their
/// client's in-flight slots. (The engine once ignored an event's cancellations: a queued job was
/// dispatched anyway, to a worker that never got it, and the client's slots leaked for good.)
@Suite struct SubscriptionEventCancelTests {
    let writer = HeaderWriter()
    let worker = PeerID([1, 1])

    func engine() -> AuthorityEngine<StoppableFetches> {
        let configuration = AuthorityConfiguration(appName: "fetcher", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        return AuthorityEngine(reactor: StoppableFetches(), configuration: configuration, logger: Logger(label: "authority", sink: .discard), journaling: true)
    }

    func send(_ action: StoppableFetches.Action, seq: UInt64, to engine: AuthorityEngine<StoppableFetches>) throws {
        engine.handleClient([[0, 1]] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(action)).frames(writer), now: 0)
    }

    func fromWorker(_ message: WorkerMessage, to engine: AuthorityEngine<StoppableFetches>) {
        engine.handleWorker([worker.bytes] + message.frames(writer), now: 0)
    }

    /// The job messages an outbox sends to the worker.
    func jobMessages(_ outbox: AuthorityEngine<StoppableFetches>.Outbox) throws -> [AuthorityToWorker] {
        try (outbox.promptToWorkers + outbox.toWorkers).compactMap { frames in
            let message = try AuthorityToWorker(frames: Array(frames.dropFirst()))
            switch message {
            case .job, .jobs, .cancel: return message
            default: return nil
            }
        }
    }

    @Test func anEventThatCancelsJobsStopsThemAndFreesTheirActions() throws {
        let engine = engine()
        var records: [AuthorityRecord] = []
        fromWorker(.ready(name: "w", app: "fetcher", capacity: 1, kinds: []), to: engine)
        fromWorker(.subscriber(kinds: []), to: engine)
        try send(.watch, seq: 1, to: engine)
        // Two fetches: the first runs on the worker (capacity 1), the second waits in the queue.
        try send(.fetch, seq: 2, to: engine)
        try send(.fetch, seq: 3, to: engine)
        var outbox = engine.takeOutbox()
        records += outbox.records
        let first = JobID(actionSeq: 2, effectIndex: 0), second = JobID(actionSeq: 3, effectIndex: 0)
        let assigned = try jobMessages(outbox)
        #expect(assigned == [.job(first, kind: "fetch", payload: try MessagePackEncoder().encode(StoppableFetches.Effect.fetch))])
        #expect(engine.currentMetrics().queuedJobs == 1)
        #expect(engine.actionClients.count == 2)

        let stop = try MessagePackEncoder().encode(StoppableFetches.Action.stop)
        fromWorker(.event(run: 1, index: 0, payload: stop), to: engine)
        outbox = engine.takeOutbox()
        records += outbox.records
        let sent = try jobMessages(outbox)
        // The running job is cancelled on its worker; the queued one is never sent (the
        // dispatcher had placed it for an instant, so the worker is told to drop it too).
        #expect(sent == [.cancel(first), .cancel(second)], "\(sent)")
        #expect(engine.currentMetrics().queuedJobs == 0)
        #expect(engine.metrics[.jobsCancelled] == 2)
        #expect(engine.sequencer.state == StoppableFetches.State(watching: true, stopped: 1, fetched: 0, abandoned: 2))
        #expect(engine.actionClients.count == 0, "both fetch actions ended")
        #expect(engine.metrics[.actionsApplied] == 4, "watch, both fetches and the event's stop")

        // The cancelled job's late report frees the worker's slot; the next fetch runs there.
        fromWorker(.done(job: first, emitCount: 0), to: engine)
        try send(.fetch, seq: 4, to: engine)
        outbox = engine.takeOutbox()
        records += outbox.records
        let next = JobID(actionSeq: 5, effectIndex: 0)
        #expect(try jobMessages(outbox).map { message -> [JobID] in
            switch message {
            case .job(let job, _, _): [job]
            case .jobs(let entries): entries.map(\.job)
            default: []
            }
        }.flatMap { $0 } == [next])

        // Replay reaches the same state, with nothing open but the new fetch.
        let replayed = self.engine()
        for record in records { try replayed.replay(record) }
        #expect(replayed.sequencer.state == engine.sequencer.state)
        #expect(replayed.sequencer.unreportedJobs.map(\.id) == [next])
        #expect(replayed.actionClients.count == 1)
    }
}
