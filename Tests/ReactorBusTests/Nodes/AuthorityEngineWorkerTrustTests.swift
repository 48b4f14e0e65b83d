import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Synchronization
import Testing

/// The authority's engine against a greedy worker: capacity clamped, quarantine, probation,
/// with the counters and log lines an operator sees.
@Suite struct AuthorityEngineWorkerTrustTests {
    let writer = HeaderWriter()
    let client: [UInt8] = [0, 1, 2, 3]
    let greedy = PeerID([7, 7])
    let healthy = PeerID([8, 8])

    func makeEngine(log: LogCapture) -> AuthorityEngine<Counter> {
        var configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.jobTimeout = .milliseconds(500)
        configuration.maxWorkerCapacity = 2
        configuration.quarantineAfter = 2
        configuration.heartbeatInterval = .seconds(10)
        let logger = log.logger("authority")
        return AuthorityEngine(reactor: Counter(), configuration: configuration, logger: logger, journaling: false)
    }

    func action(_ seq: UInt64) throws -> [[UInt8]] {
        [client] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(Counter.Action.countUpAsync)).frames(writer)
    }

    func fromWorker(_ peer: PeerID, _ message: WorkerMessage) -> [[UInt8]] { [peer.bytes] + message.frames(writer) }

    /// The jobs the outbox sends, by worker.
    func jobs(_ outbox: AuthorityEngine<Counter>.Outbox) throws -> [(PeerID, JobID)] {
        try outbox.toWorkers.compactMap { frames in
            guard case .job(let job, _, _) = try AuthorityToWorker(frames: Array(frames.dropFirst())) else { return nil }
            return (PeerID(frames[0]), job)
        }
    }

    /// `peer` runs `job` to the end: one `increase`, then DONE.
    func complete(_ job: JobID, by peer: PeerID, engine: AuthorityEngine<Counter>, now: UInt64) throws {
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        engine.handleWorker(fromWorker(peer, .emit(job: job, emitIndex: 0, payload: increase)), now: now)
        engine.handleWorker(fromWorker(peer, .done(job: job, emitCount: 1)), now: now)
    }

    @Test func aGreedyWorkerIsClampedQuarantinedAndItsJobsRunOnTheHealthyOne() throws {
        let log = LogCapture()
        let engine = makeEngine(log: log)
        engine.handleWorker(fromWorker(greedy, .ready(name: "greedy", app: "counter", capacity: 1_000_000, kinds: [])), now: 0)
        #expect(engine.metrics[.capacitiesClamped] == 1)
        #expect(log.all.contains { $0.contains("WARN") && $0.contains("worker greedy (0707) announced capacity 1000000: trusted with 2") })
        for seq: UInt64 in 1...3 { engine.handleClient(try action(seq), now: 0) }
        let first = try jobs(engine.takeOutbox())
        #expect(first.map(\.0) == [greedy, greedy])
        engine.handleWorker(fromWorker(healthy, .ready(name: "healthy", app: "counter", capacity: 1, kinds: [])), now: 10)
        var toHealthy = try jobs(engine.takeOutbox())
        #expect(toHealthy.map(\.0) == [healthy])

        // Both greedy jobs time out: quarantined, and they wait for the healthy worker.
        engine.tick(now: 500, sendHeartbeats: false)
        #expect(engine.metrics[.workersQuarantined] == 1)
        #expect(engine.metrics[.jobsRedispatched] == 2)
        #expect(engine.currentMetrics().quarantinedWorkers == 1)
        #expect(engine.currentMetrics().dictionary["quarantined_workers"] == 1)
        #expect(log.all.contains { $0.contains("WARN") && $0.contains("worker greedy (0707) quarantined: 2 job timeout(s) in a row") })
        #expect(try jobs(engine.takeOutbox()).isEmpty)

        // The healthy worker runs everything, one after the other; the greedy one gets nothing.
        var done = 0
        while let (peer, job) = toHealthy.first {
            #expect(peer == healthy)
            try complete(job, by: healthy, engine: engine, now: 600)
            done += 1
            toHealthy = Array(toHealthy.dropFirst()) + (try jobs(engine.takeOutbox()))
        }
        #expect(done == 3)
        #expect(engine.sequencer.state.count == 3)
        #expect(engine.sequencer.openJobCount == 0)
        #expect(engine.metrics[.jobsDone] == 3)
        // Its late reports change nothing.
        try complete(first[0].1, by: greedy, engine: engine, now: 700)
        #expect(engine.sequencer.state.count == 3)
        #expect(engine.metrics[.foreignReports] == 2)
        #expect(engine.isQuarantined(greedy))
    }

    @Test func aQuarantinedWorkerThatRecoveredComesBackAfterOneProbationJob() throws {
        let log = LogCapture()
        let engine = makeEngine(log: log)
        engine.handleWorker(fromWorker(greedy, .ready(name: "greedy", app: "counter", capacity: 2, kinds: [])), now: 0)
        for seq: UInt64 in 1...2 { engine.handleClient(try action(seq), now: 0) }
        engine.handleWorker(fromWorker(healthy, .ready(name: "healthy", app: "counter", capacity: 1, kinds: [])), now: 0)
        _ = engine.takeOutbox()
        engine.tick(now: 500, sendHeartbeats: false)
        #expect(engine.metrics[.workersQuarantined] == 1)
        // The healthy worker took one of the two jobs back; it finishes both in turn.
        var toHealthy = try jobs(engine.takeOutbox())
        while let (_, job) = toHealthy.first {
            try complete(job, by: healthy, engine: engine, now: 600)
            toHealthy = Array(toHealthy.dropFirst()) + (try jobs(engine.takeOutbox()))
        }
        #expect(engine.sequencer.state.count == 2)
        // Cool-off over (one job timeout): probation.
        engine.tick(now: 1_000, sendHeartbeats: false)
        #expect(log.all.contains { $0.contains("worker greedy (0707) on probation") })
        #expect(engine.currentMetrics().quarantinedWorkers == 0)
        for seq: UInt64 in 3...5 { engine.handleClient(try action(seq), now: 1_000) }
        let sent = try jobs(engine.takeOutbox())
        // One job each (probation 1, healthy capacity 1); the third waits.
        #expect(sent.filter { $0.0 == greedy }.count == 1)
        #expect(sent.filter { $0.0 == healthy }.count == 1)
        let probationJob = try #require(sent.first { $0.0 == greedy }?.1)
        try complete(probationJob, by: greedy, engine: engine, now: 1_100)
        #expect(engine.metrics[.workersRecovered] == 1)
        #expect(log.all.contains { $0.contains("worker greedy (0707) finished its probation job in time: capacity 2 again") })
        // Back to full capacity: the waiting job goes to it.
        #expect(try jobs(engine.takeOutbox()).map(\.0) == [greedy])
        #expect(engine.sequencer.state.count == 3)
    }

    @Test func aWorkerIsNamedWithItsIdWhenItDiesSaysByeOrServesAnotherApp() throws {
        let log = LogCapture()
        let engine = makeEngine(log: log)
        engine.handleWorker(fromWorker(healthy, .ready(name: "steady", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleWorker(fromWorker(greedy, .ready(name: "elsewhere", app: "primes", capacity: 1, kinds: [])), now: 0)
        engine.handleWorker(fromWorker(greedy, .ready(name: "leaving", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleWorker(fromWorker(greedy, .bye), now: 1)
        engine.tick(now: 60_000, sendHeartbeats: false)
        let lines = log.all
        #expect(lines.contains { $0.contains("worker elsewhere (0707) serves app 'primes'") }, "\(lines)")
        #expect(lines.contains { $0.contains("worker leaving (0707) said bye") }, "\(lines)")
        #expect(lines.contains { $0.contains("WARN") && $0.contains("worker steady (0808) missed 3 heartbeats") }, "\(lines)")
    }
}

extension AuthorityEngine {
    /// Whether the dispatcher holds `peer` in quarantine (for tests).
    func isQuarantined(_ peer: PeerID) -> Bool { dispatcher.isQuarantined(peer) }
}
