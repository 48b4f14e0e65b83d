import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing

/// The jobs a turn assigns to a worker that reads `jobs` messages go as one, in order, at the
/// place of the first; other messages to that worker keep their place between the jobs; a
/// worker that never said so, or said so in an earlier session, gets a message per job.
@Suite struct AuthorityEngineJobBatchTests {
    let writer = HeaderWriter()
    let client: [UInt8] = [0, 1, 2, 3]
    let one = PeerID([7, 1]), two = PeerID([7, 2])
    let effect: [UInt8]

    init() throws { effect = try MessagePackEncoder().encode(Counter.Effect.slowIncrease) }

    func makeEngine(readers: [PeerID]) -> AuthorityEngine<Counter> {
        let configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        let engine = AuthorityEngine(reactor: Counter(), configuration: configuration, logger: Logger(label: "authority", sink: .discard), journaling: false)
        for worker in [one, two] {
            fromWorker(worker, .ready(name: "w\(worker.bytes[1])", app: "counter", capacity: 8, kinds: []), to: engine)
            if readers.contains(worker) { fromWorker(worker, .features(WorkerFeature.all, maxMessageBytes: 1 << 20), to: engine) }
        }
        _ = engine.takeOutbox()
        return engine
    }

    func countUpAsync(seq: UInt64, to engine: AuthorityEngine<Counter>) throws {
        engine.handleClient([client] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(Counter.Action.countUpAsync)).frames(writer), now: 0)
    }

    func fromWorker(_ worker: PeerID, _ message: WorkerMessage, to engine: AuthorityEngine<Counter>) {
        engine.handleWorker([worker.bytes] + message.frames(writer), now: 0)
    }

    /// The worker messages of the outbox: (worker, message).
    func messages(_ outbox: AuthorityEngine<Counter>.Outbox) throws -> [(PeerID, AuthorityToWorker)] {
        try outbox.toWorkers.map { (PeerID($0[0]), try AuthorityToWorker(frames: Array($0.dropFirst()))) }
    }

    func job(_ seq: UInt64) -> JobID { JobID(actionSeq: seq, effectIndex: 0) }

    func entry(_ seq: UInt64) -> JobBatch.Entry { JobBatch.Entry(job: job(seq), kind: "slowIncrease", payload: effect) }

    @Test func aTurnsJobsForEachReaderGoAsOneMessageInOrder() throws {
        let engine = makeEngine(readers: [one, two])
        for seq: UInt64 in 1 ... 6 { try countUpAsync(seq: seq, to: engine) }
        let sent = try messages(engine.takeOutbox())
        // The dispatcher spreads the six jobs over both workers; each gets its own in one message.
        #expect(sent.count == 2)
        var given: [JobID] = []
        for (worker, message) in sent {
            guard case .jobs(let entries) = message else {
                Issue.record("expected jobs for \(worker), got \(message)")
                continue
            }
            #expect(entries.allSatisfy { $0.kind == "slowIncrease" && $0.payload == effect })
            let jobs = entries.map(\.job)
            #expect(jobs == jobs.sorted { $0.actionSeq < $1.actionSeq }, "in the order assigned")
            given += jobs
        }
        #expect(Set(given) == Set((1 ... 6).map { job(UInt64($0)) }) && given.count == 6)
    }

    @Test func aWorkerThatNeverSaidSoGetsAMessagePerJob() throws {
        let engine = makeEngine(readers: [one])
        for seq: UInt64 in 1 ... 6 { try countUpAsync(seq: seq, to: engine) }
        let sent = try messages(engine.takeOutbox())
        let toTwo = sent.filter { $0.0 == two }.map(\.1)
        let toOne = sent.filter { $0.0 == one }.map(\.1)
        #expect(!toTwo.isEmpty && toTwo.allSatisfy { if case .job = $0 { true } else { false } })
        #expect(toOne.count == 1)
        // A new session forgets what the worker read: until it says so again, a message per job.
        fromWorker(one, .ready(name: "w1", app: "counter", capacity: 8, kinds: []), to: engine)
        _ = engine.takeOutbox()
        for seq: UInt64 in 7 ... 12 { try countUpAsync(seq: seq, to: engine) }
        let again = try messages(engine.takeOutbox())
        #expect(again.allSatisfy { if case .job = $0.1 { true } else { false } }, "\(again)")
    }

    @Test func anotherMessageToTheWorkerClosesItsBatchSoOrderIsKept() throws {
        let engine = makeEngine(readers: [one])
        // Only worker one can take jobs: two says bye.
        fromWorker(two, .bye, to: engine)
        _ = engine.takeOutbox()
        try countUpAsync(seq: 1, to: engine)
        try countUpAsync(seq: 2, to: engine)
        // A message the authority answers with an error, between the jobs.
        engine.handleWorker([one.bytes, [0xC1]], now: 0)
        try countUpAsync(seq: 3, to: engine)
        let sent = try messages(engine.takeOutbox())
        #expect(sent.map(\.0) == [one, one, one])
        #expect(sent[0].1 == .jobs([entry(1), entry(2)]))
        guard case .error(_, .malformed, _) = sent[1].1 else {
            Issue.record("expected the error second, got \(sent[1].1)")
            return
        }
        // A batch of one is a plain `job`.
        #expect(sent[2].1 == .job(job(3), kind: "slowIncrease", payload: effect))
    }

    @Test func batchesArePlacedWhereTheirFirstJobWasAndSplitBySize() throws {
        var batches = WorkerJobBatches()
        var messages: [[[UInt8]]] = [[[1]]]
        let big = [UInt8](repeating: 5, count: JobBatch.maxBodyBytes / 2)
        let limit = 1 << 20
        batches.add(JobBatch.Entry(job: job(1), kind: "k", payload: big), for: one, limit: limit, in: &messages)
        batches.add(JobBatch.Entry(job: job(2), kind: "k", payload: [2]), for: two, limit: limit, in: &messages)
        batches.add(JobBatch.Entry(job: job(3), kind: "k", payload: big), for: one, limit: limit, in: &messages)  // too large together
        batches.add(JobBatch.Entry(job: job(4), kind: "k", payload: [4]), for: two, limit: limit, in: &messages)
        batches.close(two)
        batches.add(JobBatch.Entry(job: job(5), kind: "k", payload: [5]), for: two, limit: limit, in: &messages)
        #expect(!batches.isEmpty)
        batches.pack(into: &messages, writer: writer)
        #expect(batches.isEmpty)
        #expect(messages[0] == [[1]])
        let read = try messages.dropFirst().map { (PeerID($0[0]), try AuthorityToWorker(frames: Array($0.dropFirst()))) }
        #expect(read.map(\.0) == [one, two, one, two])
        #expect(read[0].1 == .job(job(1), kind: "k", payload: big))
        #expect(read[1].1 == .jobs([JobBatch.Entry(job: job(2), kind: "k", payload: [2]), JobBatch.Entry(job: job(4), kind: "k", payload: [4])]))
        #expect(read[2].1 == .job(job(3), kind: "k", payload: big))
        #expect(read[3].1 == .job(job(5), kind: "k", payload: [5]))
    }

    @Test func aReportsMessageIsEachReportAloneInOrder() throws {
        let engine = makeEngine(readers: [])
        fromWorker(two, .bye, to: engine)
        for seq: UInt64 in 1 ... 3 { try countUpAsync(seq: seq, to: engine) }
        _ = engine.takeOutbox()
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        // Job 2's emit, its done, job 1 in one done, job 3's done before its emit (which fails
        // it: the emit it declares never came first), and job 9, not this worker's.
        fromWorker(one, .reports([.emit(job: job(2), emitIndex: 0, payload: increase), .done(job: job(2), emitCount: 1),
                                  .doneWithEmit(job: job(1), emitCount: 1, payload: increase), .done(job: job(3), emitCount: 1),
                                  .doneWithEmit(job: job(9), emitCount: 1, payload: increase)]), to: engine)
        let outbox = engine.takeOutbox()
        #expect(outbox.applied.map(\.mutation.origin) == [.async(job: job(2), emitIndex: 0), .async(job: job(1), emitIndex: 0)])
        #expect(engine.sequencer.state.count == 2)
        #expect(engine.metrics[.jobsDone] == 2)
        #expect(engine.metrics[.incompleteReports] == 1)
        #expect(engine.metrics[.foreignReports] == 2, "job 9's emit and done")
    }

    /// A worker that reads small frames gets batches that fit them: every `jobs` body stays
    /// within the limit it named, whatever the effects' sizes, and nothing is lost or reordered.
    @Test func aBatchStaysWithinTheWorkersLimit() throws {
        for limit in [1_024, 1_500, 4_096] {
            for size in [0, 1, 40, 200, 700, 1_100] {
                var batches = WorkerJobBatches()
                var messages: [[[UInt8]]] = []
                let entries = (1 ... 40).map { JobBatch.Entry(job: job(UInt64($0)), kind: "slowIncrease", payload: [UInt8](repeating: 7, count: size)) }
                for entry in entries { batches.add(entry, for: one, limit: limit, in: &messages) }
                batches.pack(into: &messages, writer: writer)
                var given: [JobBatch.Entry] = []
                for frames in messages {
                    switch try AuthorityToWorker(frames: Array(frames.dropFirst())) {
                    case .jobs(let batch):
                        #expect(frames[2].count <= limit, "a body of \(frames[2].count) bytes for a limit of \(limit)")
                        given += batch
                    case .job(let job, let kind, let payload):
                        given.append(JobBatch.Entry(job: job, kind: kind, payload: payload))
                    default:
                        Issue.record("unexpected message")
                    }
                }
                #expect(given == entries)
                if JobBatch.bodyHeaderBytes + 2 * JobBatch.bytes(of: entries[0]) <= limit {
                    #expect(messages.count < entries.count, "two fit: some batch holds more than one")
                }
            }
        }
    }
}
