import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorStorage
import ReactorWire
import Testing

/// The authority's side of cancellation, driven with plain frames: `cancel` to the worker that
/// holds the job, late results counted and dropped, and a journal replay that cancels again.
@Suite struct AuthorityEngineCancellationTests {
    let writer = HeaderWriter()
    let client: [UInt8] = [0, 1, 2, 3]
    let worker = PeerID([9, 9])

    func makeEngine(journaling: Bool = false) -> AuthorityEngine<Search> {
        var configuration = AuthorityConfiguration(appName: "search", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.jobTimeout = .milliseconds(500)
        configuration.heartbeatInterval = .milliseconds(100)
        return AuthorityEngine(reactor: Search(), configuration: configuration, logger: Logger(label: "test", sink: .discard), journaling: journaling)
    }

    func action(_ action: Search.Action, seq: UInt64) throws -> [[UInt8]] {
        [client] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(action)).frames(writer)
    }

    func fromWorker(_ message: WorkerMessage) -> [[UInt8]] { [worker.bytes] + message.frames(writer) }

    func toWorkers(_ outbox: AuthorityEngine<Search>.Outbox) throws -> [AuthorityToWorker] {
        try outbox.toWorkers.map { frames in
            #expect(PeerID(frames[0]) == worker)
            return try AuthorityToWorker(frames: Array(frames.dropFirst()))
        }
    }

    func emit(_ job: JobID, _ index: UInt32, _ mutation: Search.Mutation) throws -> [[UInt8]] {
        fromWorker(.emit(job: job, emitIndex: index, payload: try MessagePackEncoder().encode(mutation)))
    }

    private let first = JobID(actionSeq: 1, effectIndex: 0)
    private let second = JobID(actionSeq: 2, effectIndex: 0)

    @Test func theWorkerIsToldBeforeItsNextJobAndWhatItStillSendsIsDroppedAndCounted() throws {
        let engine = makeEngine()
        engine.handleWorker(fromWorker(.ready(name: "w", app: "search", capacity: 1, kinds: [])), now: 0)
        engine.handleClient(try action(.search(query: "a", pauseMilliseconds: 0), seq: 1), now: 0)
        engine.handleWorker(try emit(first, 0, .hits(query: "a", results: ["a:1"])), now: 1)
        _ = engine.takeOutbox()
        engine.handleClient(try action(.search(query: "ab", pauseMilliseconds: 0), seq: 2), now: 2)
        let outbox = engine.takeOutbox()
        let sent = try toWorkers(outbox)
        #expect(sent.count == 2)
        #expect(sent.first == .cancel(first))
        if case .job(let job, "search", _)? = sent.last { #expect(job == second) } else { Issue.record("no job after the cancel: \(sent)") }
        #expect(try outbox.replies.map { try $0.reply() } == [.ack(clientSeq: 2, actionSeq: 2, version: 4)])
        #expect(outbox.applied.map(\.mutation.origin) == [.sync(index: 0), .cancelled(job: first, index: 0)])
        // Sent before the cancel reached the worker: dropped, counted, not applied.
        engine.handleWorker(try emit(first, 1, .hits(query: "a", results: ["a:2"])), now: 3)
        engine.handleWorker(fromWorker(.done(job: first, emitCount: 2)), now: 3)
        #expect(engine.metrics[.cancelledResultsDropped] == 2)
        #expect(engine.metrics[.foreignReports] == 0)
        #expect(engine.metrics[.jobsCancelled] == 1)
        #expect(engine.metrics[.mutationsCancel] == 1)
        #expect(engine.metrics[.mutationsSync] == 2)
        #expect(engine.metrics[.mutationsAsync] == 1)
        #expect(engine.metrics[.actionsApplied] == 1)
        #expect(engine.sequencer.state == Search.State(query: "ab", results: ["a:1"], cancelled: ["a"]))
        // The new job ends normally; the worker's death later re-dispatches nothing.
        engine.handleWorker(try emit(second, 0, .hits(query: "ab", results: ["ab:1"])), now: 4)
        engine.handleWorker(fromWorker(.done(job: second, emitCount: 1)), now: 4)
        engine.tick(now: 10_000, sendHeartbeats: false)
        #expect(engine.metrics[.jobsRedispatched] == 0)
        #expect(engine.metrics[.jobsTimedOut] == 0)
        #expect(engine.metrics[.actionsApplied] == 2)
        #expect(engine.currentMetrics().openJobs == 0)
    }

    @Test func replayingTheJournalCancelsAgainAndDispatchesOnlyWhatIsStillOpen() throws {
        let engine = makeEngine(journaling: true)
        engine.handleWorker(fromWorker(.ready(name: "w", app: "search", capacity: 4, kinds: [])), now: 0)
        engine.handleClient(try action(.search(query: "a", pauseMilliseconds: 0), seq: 1), now: 0)
        engine.handleWorker(try emit(first, 0, .hits(query: "a", results: ["a:1"])), now: 1)
        engine.handleClient(try action(.search(query: "ab", pauseMilliseconds: 0), seq: 2), now: 2)
        // Late: dropped, not journaled.
        engine.handleWorker(try emit(first, 1, .hits(query: "a", results: ["a:2"])), now: 3)
        let records = engine.takeOutbox().records
        #expect(records.count == 3)
        let restarted = makeEngine(journaling: true)
        for record in records { try restarted.replay(record) }
        #expect(restarted.sequencer.state == engine.sequencer.state)
        #expect(restarted.sequencer.version == engine.sequencer.version)
        #expect(restarted.sequencer.unreportedJobs.map(\.id) == [second])
        restarted.handleWorker(fromWorker(.ready(name: "w", app: "search", capacity: 4, kinds: [])), now: 0)
        _ = restarted.takeOutbox()
        #expect(restarted.dispatchUnreportedJobs(now: 0) == 1)
        let sent = try toWorkers(restarted.takeOutbox())
        #expect(sent.count == 1)
        if case .job(let job, _, _)? = sent.first { #expect(job == second) } else { Issue.record("expected one job: \(sent)") }
    }

    @Test func aCancelWhileNoWorkerHoldsTheJobSendsNothing() throws {
        let engine = makeEngine()
        engine.handleClient(try action(.search(query: "q", pauseMilliseconds: 0), seq: 1), now: 0)
        #expect(engine.currentMetrics().queuedJobs == 1)
        engine.handleClient(try action(.cancel, seq: 2), now: 0)
        let outbox = engine.takeOutbox()
        #expect(outbox.toWorkers.isEmpty)
        #expect(engine.currentMetrics().queuedJobs == 0)
        #expect(engine.currentMetrics().openJobs == 0)
        #expect(engine.metrics[.actionsApplied] == 2)
        engine.handleWorker(fromWorker(.ready(name: "w", app: "search", capacity: 4, kinds: [])), now: 1)
        #expect(try toWorkers(engine.takeOutbox()) == [.welcome(heartbeatMilliseconds: 100), .heartbeat(features: AuthorityFeature.all)])
    }
}
