import Glibc
import MessagePack
import ReactorBus
import ZeroMQ

/// The worker of the async limit baseline: the counter's effect runner written directly on
/// libzmq (a DEALER through the project's `ZMQSocket`) and msgpack-c calls, with no reactor, no
/// tasks and no `Codable`, for ``PipelineBaselineAuthority`` with a workers endpoint: what
/// running `countUpAsync`'s effects on a worker costs when only the libraries work.
///
/// It speaks docs/PROTOCOL.md's workers socket as `reactor-node worker` does: `ready` (name,
/// app `counter`, capacity, every kind, schema 1), `features` `["jobs"]` once the authority's
/// heartbeat names `job_batches`, then for each `job`
/// `[1, "job", action_seq, effect_index, "slowIncrease"]` + `{"slowIncrease":{}}` (or each job
/// of a `jobs` message) it runs the
/// trivial effect and sends what the real worker sends for it to an authority that reads
/// `done_with_emit`: one `done` `[1, "done", action_seq, effect_index, 1]` carrying the
/// mutation `{"increase":{}}` (the real worker does so whenever the job's end and its mutation
/// reach its loop together, nearly always for this effect). Any other job is answered `failed`. It reads what
/// is waiting (up to 2,048 jobs) and answers each as it is read; an `unknown_worker` error
/// makes it send `ready` again. It sends no heartbeats: the baseline authority expects none.
///
/// Run as `reactor-bench peer pipeline-worker --endpoint EP [--capacity N]`; prints a `ready`
/// event once welcomed and serves until SIGTERM.
final class PipelineBaselineWorker {
    private static let version = BaselineMessageReader.version
    /// Jobs read before the receive loop starts over (and may wait again).
    private static let batch = 2_048
    /// How long one receive waits (ms).
    private static let wait = 250
    /// How long it waits for `welcome` before it gives up (ms).
    private static let welcomeTimeout: UInt64 = 15_000

    private let socket: ZMQSocket
    private let writer = MessagePackWriter()
    private let reader = BaselineMessageReader()
    private let name = "baseline-worker-\(getpid())"
    private let capacity: Int
    private var welcomed = false
    private var jobsRun: UInt64 = 0
    /// Whether this session's `features` went out.
    private var toldFeatures = false
    /// Whether the authority reads `reports` (its heartbeat named `report_batches`).
    private var authorityReadsReports = false
    /// The turn's `done` reports not sent yet: `(action_seq, effect_index)`, all carrying the
    /// counter's `increase`.
    private var pending: [(job: UInt64, effect: UInt64)] = []
    /// Packs the body of each `reports` message.
    private let bodyWriter = MessagePackWriter()
    /// The counter's `increase`, packed once.
    private let increase: [UInt8] = {
        let writer = MessagePackWriter()
        writer.packUnitCase("increase")
        return writer.bytes
    }()
    private var errors: UInt64 = 0

    private init(context: ZMQContext, authority: String, capacity: Int) throws {
        self.capacity = capacity
        socket = try ZMQSocket(context: context, type: .dealer)
        try socket.set(.linger, 0)
        try socket.set(.receiveHighWaterMark, 100_000)
        try socket.set(.sendHighWaterMark, 100_000)
        try socket.set(.receiveTimeout, Self.wait)
        try socket.connect(authority)
    }

    /// Connects, registers, and runs jobs until the process is signalled.
    static func serve(authority: String, capacity: Int) -> Int32 {
        RawZMQBaseline.run("pipeline-worker") { context in
            let worker = try PipelineBaselineWorker(context: context, authority: authority, capacity: capacity)
            try worker.sendReady()
            let deadline = MonotonicClock.milliseconds() + Self.welcomeTimeout
            while !worker.welcomed {
                guard MonotonicClock.milliseconds() < deadline else { throw RawZMQBaseline.BaselineFailure("no welcome from \(authority)") }
                try worker.turn()
            }
            Output.line(MessagePackValue.object([("event", "ready"), ("name", .string(worker.name)), ("capacity", .whole(capacity))]).rendered)
            while true { try worker.turn() }
        }
    }

    /// Runs job `(job, effect)`: one increase (emit_index 0), sent inside the `done` that counts
    /// it; a job of another kind or effect is answered `failed`.
    private func run(job: UInt64, effect: UInt64, kind: String?, unitCase: String?) throws {
        guard kind == "slowIncrease", unitCase == "slowIncrease" else {
            try flushReports()
            return try report("failed", job: job, effect: effect, elements: 2) { $0.packUInt(0); $0.packString("this baseline worker only runs slowIncrease") }
        }
        if authorityReadsReports {
            pending.append((job, effect))
        } else {
            try report("done", job: job, effect: effect, payload: increase) { $0.packUInt(1) }
        }
        jobsRun += 1
    }

    /// `[1, "ready", name, "counter", capacity, [], 1]`.
    private func sendReady() throws {
        toldFeatures = false
        authorityReadsReports = false
        pending.removeAll()
        writer.reset()
        writer.packArrayHeader(7); writer.packUInt(Self.version); writer.packString("ready"); writer.packString(name); writer.packString("counter")
        writer.packUInt(UInt64(capacity)); writer.packArrayHeader(0); writer.packUInt(1)
        try socket.send(writer.bytes)
    }

    /// Reads up to a batch of messages (waiting up to 250 ms for the first) and answers each.
    private func turn() throws {
        let dropped = try reader.drain(socket, routed: false, wait: true, limit: Self.batch) { _, header, payload in
            if let header { try handle(header, payload: payload) } else { note("a message that is not a header") }
        }
        if dropped > 0 { note("\(dropped) message(s) of a wrong frame count") }
        try flushReports()
    }

    /// Sends the turn's `done` reports as the reactor's worker does to an authority that reads
    /// `reports`: together, in messages of at most 1,024 bytes (a turn's single report alone).
    private func flushReports() throws {
        var start = 0
        while start < pending.count {
            // [job, effect, "done", 1, increase]: at most 1 + 9 + 9 + 5 + 1 + 2 + increase bytes.
            let perReport = 27 + increase.count
            let end = min(pending.count, start + max(1, (1_024 - 19) / perReport))
            if end - start == 1 {
                let (job, effect) = pending[start]
                try report("done", job: job, effect: effect, payload: increase) { $0.packUInt(1) }
            } else {
                bodyWriter.reset()
                bodyWriter.packArrayHeader(end - start)
                for (job, effect) in pending[start..<end] {
                    bodyWriter.packArrayHeader(5); bodyWriter.packUInt(job); bodyWriter.packUInt(effect); bodyWriter.packString("done")
                    bodyWriter.packUInt(1); bodyWriter.packBinary(increase)
                }
                writer.reset()
                writer.packArrayHeader(3); writer.packUInt(Self.version); writer.packString("reports"); writer.packUInt(UInt64(end - start))
                try socket.send([writer.bytes, bodyWriter.bytes])
            }
            start = end
        }
        pending.removeAll(keepingCapacity: true)
    }

    private func handle(_ header: BaselineMessageReader.Header, payload: UnsafeRawBufferPointer?) throws {
        switch header.kind {
        case "job":
            guard let payload, header.elements.count == 3, let job = header.uint(0), let effect = header.uint(1) else { return note("a malformed job") }
            try run(job: job, effect: effect, kind: header.text(2), unitCase: reader.unitCase(payload))
        case "jobs":
            guard let payload, header.elements.count == 1, let count = header.uint(0), let jobs = reader.jobs(payload), UInt64(jobs.count) == count else {
                return note("a malformed jobs message")
            }
            for entry in jobs { try run(job: entry.job, effect: entry.effect, kind: entry.kind, unitCase: entry.unitCase) }
        case "heartbeat":
            authorityReadsReports = header.texts(0)?.contains("report_batches") == true
            // As the reactor's worker: say once per session that it reads `jobs`, to an
            // authority that named `job_batches`.
            if !toldFeatures, header.texts(0)?.contains("job_batches") == true {
                toldFeatures = true
                writer.reset()
                writer.packArrayHeader(4); writer.packUInt(Self.version); writer.packString("features")
                writer.packArrayHeader(1); writer.packString("jobs"); writer.packUInt(1 << 20)
                try socket.send(writer.bytes)
            }
        case "welcome":
            welcomed = true
        case "error":
            if header.text(1) == "unknown_worker" { try sendReady() }
            note("error \(header.text(1) ?? "?"): \(header.text(2) ?? "")")
        default:
            break
        }
    }

    /// Sends `[1, kind, action_seq, effect_index, rest...]` (`rest` packs `elements` more), then
    /// `payload` as a second frame when given (packed before with the same writer).
    private func report(_ kind: String, job: UInt64, effect: UInt64, elements: Int = 1, payload: [UInt8]? = nil,
                        _ rest: (MessagePackWriter) -> Void) throws {
        writer.reset()
        writer.packArrayHeader(4 + elements); writer.packUInt(Self.version); writer.packString(kind); writer.packUInt(job); writer.packUInt(effect)
        rest(writer)
        try socket.send(payload.map { [writer.bytes, $0] } ?? [writer.bytes])
    }

    /// Logs the first few problems to stderr (a flood would cost more than the jobs).
    private func note(_ problem: String) {
        errors += 1
        if errors <= 10 { Output.error("peer pipeline-worker: \(problem) after \(jobsRun) jobs") }
    }
}
