import MessagePack
import ReactorBus
import ZeroMQ

/// The limit baselines of the sync and async pipelines: the counter app's authority written
/// directly on libzmq (through the project's `ZMQSocket`, as the nodes use it) and msgpack-c
/// calls, with no reactor, no `Sequencer`, no `Codable` and no journal: what the same client →
/// authority (→ workers) → feed → observer pipeline costs when only the libraries work, so a
/// report shows the framework's overhead apart from theirs.
///
/// It does what `examples/python/baseline_authority.py` does, with the same batching (read what
/// is waiting, up to 2,048 messages per socket, then publish one snapshot): `action` (`countUp`
/// applied and acked with `action_seq` and version; a resent `(client_id, client_seq)` acked
/// again, not applied), `snapshot`, `ping`, `stats`; anything else gets an `error`. Headers are
/// read with msgpack-c (``BaselineMessageReader``) and packed with `msgpack_pack_*` calls into a
/// reused buffer; the action payload is unpacked and checked to be `{"countUp":{}}`.
///
/// With a workers endpoint (a ROUTER) it also takes `countUpAsync` the way the real authority
/// does, with the messages of docs/PROTOCOL.md's workers socket: the action is acked at once
/// (its `version` unchanged: no sync mutation), and its effect becomes a job
/// `[1, "job", action_seq, 0, "slowIncrease"]` + `{"slowIncrease":{}}` for a worker that sent
/// `ready` (``PipelineBaselineWorker``), at most 256 jobs in flight per worker
/// (``PipelineBaselineJobs``); the worker's mutation (`{"increase":{}}`, in an `emit` or inside
/// the `done`, as `done_with_emit` allows) is applied once (`count += 1`) and its `done` frees
/// the slot. The feed is published exactly as for `countUp`. As the reactor's authority does
/// (`job_batches`), it names the features it reads in one `heartbeat` after each `welcome`, and
/// sends a worker that answered `features` `["jobs"]` the jobs a turn assigns it as one `jobs`
/// message (a turn's single job as a `job`). Likewise on the actions socket: a client that sent
/// `features` `["acks"]` gets the acks a turn owes it as `acks` messages of at most
/// ``maxAcksPerMessage`` (a turn's single ack as an `ack`), sent before any other reply to it.
/// No other heartbeats, no job timeouts: a worker that re-registers or says `bye` gives its jobs back.
///
/// Run as `reactor-bench peer pipeline-authority --actions EP --feed EP [--workers EP]`; prints
/// the bound endpoints as one JSON line, like `reactor-node authority`, and serves until SIGTERM.
final class PipelineBaselineAuthority {
    private typealias Header = BaselineMessageReader.Header

    private static let version = BaselineMessageReader.version
    /// Client sequence numbers remembered per client (as the protocol says an authority must).
    private static let remembered = 4_096
    /// Messages read from each socket before one snapshot is published.
    private static let batch = 2_048
    /// How long one turn waits for the first message (ms).
    private static let wait = 250
    /// The interval `welcome` announces (this baseline neither sends nor expects heartbeats).
    private static let heartbeatMilliseconds: UInt64 = 1_000

    private let actions: ZMQSocket
    private let feed: ZMQSocket
    /// The workers' ROUTER, and a poller over it and `actions`, with a workers endpoint.
    private let workers: (socket: ZMQSocket, poller: ZMQPoller)?
    private let writer = MessagePackWriter()
    /// Packs the body of each `jobs` message.
    private let bodyWriter = MessagePackWriter()
    private let reader = BaselineMessageReader()
    /// Acks per `acks` message at most: as many as the reactor's authority puts in its 4 KiB bodies.
    private static let maxAcksPerMessage = 146
    /// Clients that read `acks` messages, and the acks this turn owes each, in order.
    private var ackReaders: Set<[UInt8]> = []
    private var turnAcks: [[UInt8]: [(seq: UInt64, actionSeq: UInt64, version: UInt64)]] = [:]
    private var ackOrder: [[UInt8]] = []
    /// Workers that read `jobs` messages, and the jobs this turn assigned each, in order.
    private var batchReaders: Set<[UInt8]> = []
    private var assigned: [(worker: [UInt8], jobs: [UInt64])] = []
    private var count: UInt64 = 0
    private var actionSeq: UInt64 = 0
    private var clients: [String: [UInt64: (actionSeq: UInt64, version: UInt64)]] = [:]
    private var jobs = PipelineBaselineJobs()
    private var counters = Counters()
    private var publishedVersion: UInt64?
    private var lastPublished: UInt64 = 0

    private init(context: ZMQContext, actions actionsEndpoint: String, feed feedEndpoint: String, workers workersEndpoint: String?) throws {
        actions = try Self.router(context: context, binding: actionsEndpoint)
        feed = try ZMQSocket(context: context, type: .pub)
        try feed.set(.linger, 0)
        try feed.set(.sendHighWaterMark, 10_000)
        try feed.bind(feedEndpoint)
        if let workersEndpoint {
            let socket = try Self.router(context: context, binding: workersEndpoint)
            let poller = ZMQPoller()
            try poller.register(socket)
            try poller.register(actions)
            workers = (socket, poller)
        } else {
            workers = nil
        }
    }

    private static func router(context: ZMQContext, binding endpoint: String) throws -> ZMQSocket {
        let socket = try ZMQSocket(context: context, type: .router)
        try socket.set(.linger, 0)
        try socket.set(.receiveHighWaterMark, 100_000)
        try socket.set(.sendHighWaterMark, 100_000)
        try socket.set(.receiveTimeout, wait)
        try socket.bind(endpoint)
        return socket
    }

    /// Binds, prints the endpoints and serves until the process is signalled.
    static func serve(actions: String, feed: String, workers: String?) -> Int32 {
        RawZMQBaseline.run("pipeline-authority") { context in
            let authority = try PipelineBaselineAuthority(context: context, actions: actions, feed: feed, workers: workers)
            var endpoints: [(String, MessagePackValue)] = [("actions", .string(try authority.actions.get(.lastEndpoint))),
                                                           ("feed", .string(try authority.feed.get(.lastEndpoint)))]
            if let socket = authority.workers?.socket { endpoints.append(("workers", .string(try socket.get(.lastEndpoint)))) }
            Output.line(MessagePackValue.object(endpoints).rendered)
            while true { try authority.turn() }
        }
    }

    /// Reads up to a batch of messages from each socket (waiting up to 250 ms for the first),
    /// then publishes. Workers' reports first: they free slots for the actions that follow.
    private func turn() throws {
        if let workers {
            try workers.poller.poll(timeout: Self.wait)
            try drain(workers.socket, wait: false) { handleWorker($0, $1, $2) }
            try drain(actions, wait: false) { handleClient($0, $1, $2) }
            sendAssigned()
        } else {
            try drain(actions, wait: true) { handleClient($0, $1, $2) }
        }
        sendAcks()
        try publish()
    }

    /// Reads up to a batch of messages from one ROUTER into `handle`; those of a wrong frame
    /// count are dropped unanswered and counted as malformed.
    private func drain(_ socket: ZMQSocket, wait: Bool, _ handle: ([UInt8], Header?, UnsafeRawBufferPointer?) -> Void) throws {
        let dropped = try reader.drain(socket, routed: true, wait: wait, limit: Self.batch, handle)
        counters.malformed += UInt64(dropped)
    }

    // MARK: Actions socket

    /// What `stats` reports: the Python baseline's names, and the real authority's for jobs.
    private struct Counters {
        var actionsAccepted: UInt64 = 0
        var actionsDuplicate: UInt64 = 0
        var badActions: UInt64 = 0
        var malformed: UInt64 = 0
        var snapshotsPublished: UInt64 = 0
        var snapshotRequests: UInt64 = 0
        var workersRegistered: UInt64 = 0
        var jobsDone: UInt64 = 0
        var mutationsAsync: UInt64 = 0
        var emitsDuplicate: UInt64 = 0
        var foreignReports: UInt64 = 0
        var incompleteReports: UInt64 = 0
        var badMutations: UInt64 = 0

        var named: [(String, UInt64)] {
            [("actions_accepted", actionsAccepted), ("actions_duplicate", actionsDuplicate), ("bad_actions", badActions),
             ("malformed", malformed), ("snapshots_published", snapshotsPublished), ("snapshot_requests", snapshotRequests),
             ("workers_registered", workersRegistered), ("jobs_done", jobsDone), ("mutations_async", mutationsAsync),
             ("emits_duplicate", emitsDuplicate), ("foreign_reports", foreignReports), ("incomplete_reports", incompleteReports),
             ("bad_mutations", badMutations)]
        }
    }

    private func handleClient(_ identity: [UInt8], _ header: Header?, _ payload: UnsafeRawBufferPointer?) {
        guard let header else { return malformed(actions, identity) }
        let (version, actionSeq) = (count, self.actionSeq)
        switch header.kind {
        case "action":
            guard let payload, header.elements.count == 2, let client = header.text(0), !client.isEmpty, let seq = header.uint(1) else {
                return malformed(actions, identity)
            }
            handleAction(identity, client: client, seq: seq, payload)
        case "features":
            guard header.elements.count == 2, let id = header.uint(0), let features = header.texts(1) else { return malformed(actions, identity) }
            if features.contains("acks") { ackReaders.insert(identity) } else { ackReaders.remove(identity) }
            sendAcks(to: identity)
            reply(actions, identity) { w in
                w.packArrayHeader(4); w.packUInt(Self.version); w.packString("features"); w.packUInt(id)
                w.packArrayHeader(1); w.packString("ack_batches")
            }
        case "snapshot", "ping", "stats":
            guard header.elements.count == 1, let id = header.uint(0) else { return malformed(actions, identity) }
            sendAcks(to: identity)
            switch header.kind {
            case "snapshot":
                counters.snapshotRequests += 1
                reply(actions, identity, payload: state()) { writer in
                    writer.packArrayHeader(6); writer.packUInt(Self.version); writer.packString("snapshot"); writer.packUInt(id)
                    writer.packUInt(version); writer.packUInt(actionSeq); writer.packString("counter")
                }
            case "ping":
                reply(actions, identity) { $0.packArrayHeader(4); $0.packUInt(Self.version); $0.packString("pong"); $0.packUInt(id); $0.packUInt(version) }
            default:
                let values = counters.named + [("jobs_dispatched", jobs.dispatched), ("version", version), ("action_seq", actionSeq),
                                               ("workers", UInt64(jobs.workerCount)), ("open_jobs", UInt64(jobs.openCount)),
                                               ("queued_jobs", UInt64(jobs.queuedCount))]
                reply(actions, identity) { writer in
                    writer.packArrayHeader(4); writer.packUInt(Self.version); writer.packString("stats"); writer.packUInt(id)
                    writer.packMapHeader(values.count)
                    for (name, value) in values { writer.packString(name); writer.packUInt(value) }
                }
            }
        default:
            error(actions, identity, ref: header.ref, code: "unknown_kind", "unknown kind '\(header.kind)' on the actions socket")
        }
    }

    private func handleAction(_ identity: [UInt8], client: String, seq: UInt64, _ payload: UnsafeRawBufferPointer) {
        if let known = clients[client]?[seq] {
            counters.actionsDuplicate += 1
            ack(identity, seq: seq, actionSeq: known.actionSeq, version: known.version)
            return
        }
        let effect: Bool
        switch reader.unitCase(payload) {
        case "countUp": effect = false
        case "countUpAsync" where workers != nil: effect = true
        default:
            counters.badActions += 1
            error(actions, identity, ref: seq, code: "bad_action",
                  workers == nil ? "this baseline authority only applies countUp" : "this baseline authority only applies countUp and countUpAsync")
            return
        }
        actionSeq += 1
        if !effect { count += 1 }
        counters.actionsAccepted += 1
        var seen = clients.removeValue(forKey: client) ?? [:]
        seen[seq] = (actionSeq, count)
        if seen.count > 2 * Self.remembered {
            for old in seen.keys.sorted().dropLast(Self.remembered) { seen[old] = nil }
        }
        clients[client] = seen
        ack(identity, seq: seq, actionSeq: actionSeq, version: count)
        if effect, let assignment = jobs.enqueue(actionSeq) { send(assignment) }
    }

    private func ack(_ identity: [UInt8], seq: UInt64, actionSeq: UInt64, version: UInt64) {
        guard ackReaders.contains(identity) else { return sendAck(identity, (seq, actionSeq, version)) }
        if turnAcks[identity] == nil { ackOrder.append(identity) }
        turnAcks[identity, default: []].append((seq, actionSeq, version))
    }

    private func sendAck(_ identity: [UInt8], _ ack: (seq: UInt64, actionSeq: UInt64, version: UInt64)) {
        reply(actions, identity) { $0.packArrayHeader(5); $0.packUInt(Self.version); $0.packString("ack"); $0.packUInt(ack.seq); $0.packUInt(ack.actionSeq); $0.packUInt(ack.version) }
    }

    /// Sends the acks this turn owes `identity` (every client's, without one): `[1, "acks", n]`
    /// + `[[client_seq, action_seq, version], ...]`, or an `ack` for a single one.
    private func sendAcks(to identity: [UInt8]? = nil) {
        guard !turnAcks.isEmpty else { return }
        for client in identity.map({ [$0] }) ?? ackOrder {
            guard let acks = turnAcks.removeValue(forKey: client) else { continue }
            var start = 0
            while start < acks.count {
                let part = acks[start ..< min(acks.count, start + Self.maxAcksPerMessage)]
                start = part.endIndex
                if part.count == 1, let only = part.first {
                    sendAck(client, only)
                    continue
                }
                bodyWriter.reset()
                bodyWriter.packArrayHeader(part.count)
                for ack in part {
                    bodyWriter.packArrayHeader(3); bodyWriter.packUInt(ack.seq); bodyWriter.packUInt(ack.actionSeq); bodyWriter.packUInt(ack.version)
                }
                reply(actions, client, payload: bodyWriter.bytes) { $0.packArrayHeader(3); $0.packUInt(Self.version); $0.packString("acks"); $0.packUInt(UInt64(part.count)) }
            }
        }
        if identity == nil || turnAcks.isEmpty { ackOrder.removeAll(keepingCapacity: true) }
    }

    // MARK: Workers socket

    private func handleWorker(_ identity: [UInt8], _ header: Header?, _ payload: UnsafeRawBufferPointer?) {
        guard let socket = workers?.socket else { return }
        guard let header else { return malformed(socket, identity) }
        if header.kind != "ready", !jobs.knows(identity) {
            return error(socket, identity, ref: 0, code: "unknown_worker", "send ready first")
        }
        switch header.kind {
        case "ready":
            guard header.text(0) != nil, let app = header.text(1), let capacity = header.uint(2) else { return malformed(socket, identity) }
            guard app == "counter" else { return error(socket, identity, ref: 0, code: "wrong_app", "this baseline authority serves counter, not '\(app)'") }
            counters.workersRegistered += 1
            reply(socket, identity) { $0.packArrayHeader(3); $0.packUInt(Self.version); $0.packString("welcome"); $0.packUInt(Self.heartbeatMilliseconds) }
            reply(socket, identity) { w in
                w.packArrayHeader(3); w.packUInt(Self.version); w.packString("heartbeat")
                w.packArrayHeader(3); w.packString("done_with_emit"); w.packString("job_batches"); w.packString("report_batches")
            }
            batchReaders.remove(identity)
            jobs.register(identity, capacity: capacity).forEach(send)
        case "features":
            // Its jobs are tens of bytes each, 256 at most per turn: far below any frame limit.
            guard header.elements.count == 2, header.uint(1) != nil else { return malformed(socket, identity) }
            if header.texts(0)?.contains("jobs") == true { batchReaders.insert(identity) }
        case "emit":
            // The counter's one effect (index 0) emits one mutation (index 0).
            guard let payload, header.elements.count == 3, let job = header.uint(0), header.uint(1) == 0, header.uint(2) == 0 else {
                return malformed(socket, identity)
            }
            applyEmit(payload, job: job, socket: socket, identity: identity)
        case "done":
            guard header.elements.count == 3, let job = header.uint(0), header.uint(1) == 0, let emitted = header.uint(2) else {
                return malformed(socket, identity)
            }
            // With a payload frame, the job's one mutation rides along (`done_with_emit`, which
            // the baseline worker always uses, as the reactor's workers do where they can).
            if let payload {
                guard emitted == 1 else { return malformed(socket, identity) }
                applyEmit(payload, job: job, socket: socket, identity: identity)
            }
            finish(job, emitted: emitted, from: identity)
        case "reports":
            // Each `done` carrying the counter's `increase`, as if it had come alone.
            guard let payload, header.elements.count == 1, let count = header.uint(0), let reports = reader.doneReports(payload),
                  UInt64(reports.count) == count else { return malformed(socket, identity) }
            for done in reports {
                guard done.effect == 0, done.count == 1, let increase = done.mutation else { return malformed(socket, identity) }
                increase.withUnsafeBytes { applyEmit($0, job: done.job, socket: socket, identity: identity) }
                finish(done.job, emitted: 1, from: identity)
            }
        case "heartbeat":
            break
        case "bye":
            jobs.remove(identity).forEach(send)
        default:
            error(socket, identity, ref: 0, code: "unknown_kind", "unknown kind '\(header.kind)' on the workers socket")
        }
    }

    /// `identity` says job `job` is done after `emitted` mutations: its slot takes the next job.
    private func finish(_ job: UInt64, emitted: UInt64, from identity: [UInt8]) {
        let (outcome, next) = jobs.done(job, from: identity)
        switch outcome {
        case .done where emitted == 1: counters.jobsDone += 1
        case .done, .incomplete: counters.incompleteReports += 1
        case .foreign: counters.foreignReports += 1
        }
        if let next { send(next) }
    }

    /// Notes the job for its worker: the turn's jobs leave together (``sendAssigned()``).
    private func send(_ assignment: PipelineBaselineJobs.Assignment) {
        if let index = assigned.firstIndex(where: { $0.worker == assignment.worker }) {
            assigned[index].jobs.append(assignment.job)
        } else {
            assigned.append((assignment.worker, [assignment.job]))
        }
    }

    /// Sends each worker this turn's jobs: `[1, "jobs", n]` + `[[action_seq, 0, "slowIncrease",
    /// {"slowIncrease":{}}], ...]` to a worker that reads them, else (and for one job)
    /// `[1, "job", action_seq, 0, "slowIncrease"]` + `{"slowIncrease":{}}` each.
    private func sendAssigned() {
        guard let socket = workers?.socket, !assigned.isEmpty else { return }
        writer.reset()
        writer.packUnitCase("slowIncrease")
        let effect = writer.bytes
        for (worker, jobs) in assigned {
            if jobs.count > 1, batchReaders.contains(worker) {
                bodyWriter.reset()
                bodyWriter.packArrayHeader(jobs.count)
                for job in jobs {
                    bodyWriter.packArrayHeader(4); bodyWriter.packUInt(job); bodyWriter.packUInt(0); bodyWriter.packString("slowIncrease")
                    bodyWriter.packBinary(effect)
                }
                reply(socket, worker, payload: bodyWriter.bytes) { $0.packArrayHeader(3); $0.packUInt(Self.version); $0.packString("jobs"); $0.packUInt(UInt64(jobs.count)) }
                continue
            }
            for job in jobs {
                reply(socket, worker, payload: effect) { writer in
                    writer.packArrayHeader(5); writer.packUInt(Self.version); writer.packString("job"); writer.packUInt(job); writer.packUInt(0)
                    writer.packString("slowIncrease")
                }
            }
        }
        assigned.removeAll(keepingCapacity: true)
    }

    // MARK: Feed

    /// After each batch that changed the state, one snapshot; a heartbeat once a second when idle.
    private func publish() throws {
        let now = MonotonicClock.milliseconds()
        let changed = count != publishedVersion
        guard changed || now - lastPublished >= 1_000 else { return }
        let payload = changed ? state() : nil
        writer.reset()
        writer.packArrayHeader(3); writer.packUInt(Self.version); writer.packUInt(count); writer.packUInt(actionSeq)
        if let payload {
            try feed.send([Array("snapshot".utf8), writer.bytes, payload])
            counters.snapshotsPublished += 1
            publishedVersion = count
        } else {
            try feed.send([Array("heartbeat".utf8), writer.bytes])
        }
        lastPublished = now
    }

    // MARK: msgpack-c

    /// `{"count": N}`.
    private func state() -> [UInt8] {
        writer.reset()
        writer.packMapHeader(1); writer.packString("count"); writer.packUInt(count)
        return writer.bytes
    }

    /// Sends `[identity, header, payload?]`, the header packed by `pack` (the payload, packed
    /// before with the same writer, is already copied out).
    private func reply(_ socket: ZMQSocket, _ identity: [UInt8], payload: [UInt8]? = nil, _ pack: (MessagePackWriter) -> Void) {
        writer.reset()
        pack(writer)
        _ = try? socket.send(payload.map { [identity, writer.bytes, $0] } ?? [identity, writer.bytes])
    }

    private func error(_ socket: ZMQSocket, _ identity: [UInt8], ref: UInt64, code: String, _ message: String) {
        if socket === actions { sendAcks(to: identity) }
        reply(socket, identity) { $0.packArrayHeader(5); $0.packUInt(Self.version); $0.packString("error"); $0.packUInt(ref); $0.packString(code); $0.packString(message) }
    }

    /// The counter's `increase` for `job` from `identity`: applied once, if the job is its.
    private func applyEmit(_ payload: UnsafeRawBufferPointer, job: UInt64, socket: ZMQSocket, identity: [UInt8]) {
        guard reader.unitCase(payload) == "increase" else {
            counters.badMutations += 1
            return error(socket, identity, ref: job, code: "malformed", "the mutation is not the counter's increase")
        }
        switch jobs.emit(job, from: identity) {
        case .apply:
            count += 1
            counters.mutationsAsync += 1
        case .duplicate: counters.emitsDuplicate += 1
        case .foreign: counters.foreignReports += 1
        }
    }

    /// Counts a message of the wrong shape and answers `malformed` with `ref` 0.
    private func malformed(_ socket: ZMQSocket, _ identity: [UInt8]) {
        counters.malformed += 1
        error(socket, identity, ref: 0, code: "malformed", "the message has the wrong shape")
    }
}
