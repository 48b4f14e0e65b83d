import ReactorCore

/// What a worker sends to the authority's workers socket.
package enum WorkerMessage: Sendable, Equatable {
    /// The worker announces itself: its name, app, how many jobs it holds at once (running and
    /// waiting in its own queue), which kinds, and the app's schema version it speaks (1 from a
    /// worker that predates the field).
    case ready(name: String, app: String, capacity: UInt64, kinds: [String], schema: UInt32 = 1)
    /// A sign of life.
    case heartbeat
    /// The `emitIndex`-th mutation of a job; the payload is the app's mutation.
    case emit(job: JobID, emitIndex: UInt32, payload: [UInt8])
    /// The job's effect returned after emitting `emitCount` mutations.
    case done(job: JobID, emitCount: UInt32)
    /// An `emit` and the `done` after it in one message: the job's effect returned after
    /// emitting `emitCount` (at least 1) mutations, and the payload is the last of them (index
    /// `emitCount - 1`). Sent only to an authority that announced ``AuthorityFeature/doneWithEmit``.
    case doneWithEmit(job: JobID, emitCount: UInt32, payload: [UInt8])
    /// The job's effect failed for good.
    case failed(job: JobID, failure: EffectFailure)
    /// The worker is stopping: any job it has not reported should go to another worker now.
    case bye
    /// The worker runs subscriptions of these kinds (empty: every kind). Sent after each `ready`.
    case subscriber(kinds: [String])
    /// The `index`-th event of subscription run `run`; the payload is the app's action.
    case event(run: UInt64, index: UInt64, payload: [UInt8])
    /// What this worker reads beyond every release's messages (``WorkerFeature``), and the
    /// largest message frame it reads (its `--max-message-bytes`: a `jobs` message stays within
    /// it). Sent once per session, only to an authority that named ``AuthorityFeature/jobBatches``.
    case features([String], maxMessageBytes: UInt64)
    /// Several `emit`, `done` and `doneWithEmit` reports, in this order (``JobReports``): each
    /// means exactly that message alone. Sent only to an authority that named
    /// ``AuthorityFeature/reportBatches``.
    case reports([WorkerMessage])

    /// Decodes the frames after the routing id.
    package init(frames: [[UInt8]]) throws(ProtocolError) {
        guard let first = frames.first else { throw .malformed("empty message") }
        self = try WireHeader.read(first) { header throws(ProtocolError) -> Self in
            if header.kind == "done" {
                guard frames.count <= 2 else { throw .malformed("done is 1 or 2 frames, got \(frames.count)") }
            } else {
                let expectedFrames = header.kind == "emit" || header.kind == "event" || header.kind == "reports" ? 2 : 1
                guard frames.count == expectedFrames else {
                    throw .malformed("\(header.kind) is \(expectedFrames) frame\(expectedFrames == 1 ? "" : "s"), got \(frames.count)")
                }
            }
            switch header.kind {
            case "ready":
                // Four fields from workers before `schema`.
                if header.fieldCount != 4 { try header.expect(fields: 5) }
                let capacity = try header.uint(2, "capacity")
                guard capacity >= 1 else { throw .malformed("ready.capacity must be at least 1") }
                return .ready(name: try header.string(0, "name", maxBytes: 256), app: try header.string(1, "app", maxBytes: 256),
                              capacity: capacity, kinds: try header.strings(3, "kinds"),
                              schema: header.fieldCount == 5 ? try header.uint32(4, "schema") : 1)
            case "heartbeat":
                try header.expect(fields: 0)
                return .heartbeat
            case "bye":
                try header.expect(fields: 0)
                return .bye
            case "emit":
                try header.expect(fields: 3)
                return .emit(job: try Self.job(header), emitIndex: try header.uint32(2, "emit_index"), payload: frames[1])
            case "done":
                try header.expect(fields: 3)
                let job = try Self.job(header), count = try header.uint32(2, "emit_count")
                if frames.count == 2 {
                    guard count >= 1 else { throw .malformed("done with a mutation must count at least that one") }
                    return .doneWithEmit(job: job, emitCount: count, payload: frames[1])
                } else {
                    return .done(job: job, emitCount: count)
                }
            case "failed":
                try header.expect(fields: 4)
                let attempts = try header.uint(2, "attempts")
                return .failed(job: try Self.job(header), failure: EffectFailure(message: try header.string(3, "message", maxBytes: 4_096), attempts: Int(clamping: attempts)))
            case "subscriber":
                try header.expect(fields: 1)
                return .subscriber(kinds: try header.strings(0, "kinds"))
            case "event":
                try header.expect(fields: 2)
                return .event(run: try header.uint(0, "run"), index: try header.uint(1, "index"), payload: frames[1])
            case "features":
                try header.expect(fields: 2)
                return .features(try header.strings(0, "features"), maxMessageBytes: try header.uint(1, "max_message_bytes"))
            case "reports":
                return .reports(try JobReports.read(frames[1], count: try header.batchCount()))
            default:
                throw ProtocolError(.unknownKind, "unknown kind '\(header.kind)' on the workers socket")
            }
        }
    }

    static func job(_ header: WireHeader) throws(ProtocolError) -> JobID {
        JobID(actionSeq: try header.uint(0, "action_seq"), effectIndex: try header.uint32(1, "effect_index"))
    }

    /// The frames to send.
    package func frames(_ writer: HeaderWriter) -> [[UInt8]] {
        switch self {
        case .ready(let name, let app, let capacity, let kinds, let schema):
            [writer.header("ready", { w in
                w.packString(name); w.packString(app); w.packUInt(capacity)
                w.packStrings(kinds)
                w.packUInt(UInt64(schema))
            }, count: 5)]
        case .heartbeat:
            [writer.header("heartbeat", count: 0)]
        case .bye:
            [writer.header("bye", count: 0)]
        case .emit(let job, let index, let payload):
            [writer.header("emit", { $0.packUInt(job.actionSeq); $0.packUInt(UInt64(job.effectIndex)); $0.packUInt(UInt64(index)) }, count: 3), payload]
        case .done(let job, let count):
            [writer.header("done", { $0.packUInt(job.actionSeq); $0.packUInt(UInt64(job.effectIndex)); $0.packUInt(UInt64(count)) }, count: 3)]
        case .doneWithEmit(let job, let count, let payload):
            [writer.header("done", { $0.packUInt(job.actionSeq); $0.packUInt(UInt64(job.effectIndex)); $0.packUInt(UInt64(count)) }, count: 3), payload]
        case .failed(let job, let failure):
            [writer.header("failed", { w in
                w.packUInt(job.actionSeq); w.packUInt(UInt64(job.effectIndex))
                w.packUInt(UInt64(max(0, failure.attempts))); w.packString(failure.message)
            }, count: 4)]
        case .subscriber(let kinds):
            [writer.header("subscriber", { w in
                w.packStrings(kinds)
            }, count: 1)]
        case .event(let run, let index, let payload):
            [writer.header("event", { $0.packUInt(run); $0.packUInt(index) }, count: 2), payload]
        case .features(let features, let maxMessageBytes):
            [writer.header("features", { w in
                w.packStrings(features)
                w.packUInt(maxMessageBytes)
            }, count: 2)]
        case .reports(let reports):
            [writer.header("reports", { $0.packUInt(UInt64(reports.count { JobReports.isReport($0) })) }, count: 1),
             writer.body { JobReports.pack(reports, into: $0) }]
        }
    }
}

/// What the authority sends to a worker.
package enum AuthorityToWorker: Sendable, Equatable {
    /// Registration accepted; heartbeats are expected every `heartbeatMilliseconds`. An elected
    /// authority names its term (epoch), so that a worker never follows an older one again.
    case welcome(heartbeatMilliseconds: UInt64, term: UInt64? = nil)
    /// A job to run; the payload is the app's effect.
    case job(JobID, kind: String, payload: [UInt8])
    /// Several jobs to run, in this order (``JobBatch``): sent only to a worker that named
    /// ``WorkerFeature/jobs``.
    case jobs([JobBatch.Entry])
    /// A sign of life, naming what this authority reads beyond the messages every release
    /// reads (see ``AuthorityFeature``). Every release's worker ignores what follows the kind of
    /// a `heartbeat`, so the list reaches new workers and costs old ones nothing.
    case heartbeat(features: [String] = [])
    /// A refusal.
    case error(ref: UInt64, code: ErrorCode, message: String)
    /// Stop running this job: it was cancelled, and nothing more it sends will be applied.
    case cancel(JobID)
    /// Run subscription run `run` (its id and kind given for logs), resuming after event index
    /// `after` (`nil`: from event 0); the payload is the app's subscription.
    case subscribe(run: UInt64, id: String, kind: String, after: UInt64?, payload: [UInt8])
    /// Stop subscription run `run`.
    case unsubscribe(run: UInt64)

    /// Decodes the frames a worker's DEALER receives.
    package init(frames: [[UInt8]]) throws(ProtocolError) {
        var jobs: [JobBatch.Entry] = []
        try self.init(frames: frames, jobs: &jobs)
    }

    /// The same, reading a `jobs` message's entries into `jobs`' storage, which the message then
    /// holds (`jobs` is left empty): a worker hands the array back once it has handled the
    /// message, so that its batches of jobs reuse one array.
    package init(frames: [[UInt8]], jobs spare: inout [JobBatch.Entry]) throws(ProtocolError) {
        guard let first = frames.first else { throw .malformed("empty message") }
        self = try WireHeader.read(first) { header throws(ProtocolError) -> Self in
            switch header.kind {
            case "welcome":
                try header.expect(atLeast: 1)
                return .welcome(heartbeatMilliseconds: try header.uint(0, "heartbeat_ms"),
                                term: header.fieldCount >= 2 ? try header.optionalUInt(1, "term") : nil)
            case "job":
                guard frames.count == 2 else { throw .malformed("job needs a header and a payload frame") }
                try header.expect(fields: 3)
                return .job(try WorkerMessage.job(header), kind: try header.string(2, "kind"), payload: frames[1])
            case "jobs":
                guard frames.count == 2 else { throw .malformed("jobs needs a header and a body frame") }
                try JobBatch.read(frames[1], count: try header.batchCount(), into: &spare)
                let entries = spare
                spare = []
                return .jobs(entries)
            case "heartbeat":
                // Read leniently, as every release did: a list this worker cannot read names nothing.
                let features = header.fieldCount >= 1 ? (try? header.strings(0, "features")) ?? [] : []
                return .heartbeat(features: features)
            case "subscribe":
                guard frames.count == 2 else { throw .malformed("subscribe needs a header and a payload frame") }
                try header.expect(fields: 4)
                return .subscribe(run: try header.uint(0, "run"), id: try header.string(1, "id", maxBytes: 4_096), kind: try header.string(2, "kind"),
                                  after: try header.optionalUInt(3, "after"), payload: frames[1])
            case "unsubscribe":
                try header.expect(fields: 1)
                return .unsubscribe(run: try header.uint(0, "run"))
            case "error":
                guard case .error(let ref, let code, let message) = try AuthorityReply.decodeError(header) else {
                    throw .malformed("error header")
                }
                return .error(ref: ref, code: code, message: message)
            case "cancel":
                guard frames.count == 1 else { throw .malformed("cancel is 1 frame, got \(frames.count)") }
                try header.expect(fields: 2)
                return .cancel(try WorkerMessage.job(header))
            default:
                throw ProtocolError(.unknownKind, "unknown kind '\(header.kind)' from the authority")
            }
        }
    }

    /// The frames to send (without a routing id).
    package func frames(_ writer: HeaderWriter) -> [[UInt8]] {
        switch self {
        case .welcome(let interval, let term):
            // The term only from an elected authority: a worker of an older release expects one
            // field, and can only join authorities that run without an election.
            if let term {
                [writer.header("welcome", { $0.packUInt(interval); $0.packUInt(term) }, count: 2)]
            } else {
                [writer.header("welcome", { $0.packUInt(interval) }, count: 1)]
            }
        case .job(let job, let kind, let payload):
            [writer.header("job", { $0.packUInt(job.actionSeq); $0.packUInt(UInt64(job.effectIndex)); $0.packString(kind) }, count: 3), payload]
        case .jobs(let entries):
            [writer.header("jobs", { $0.packUInt(UInt64(entries.count)) }, count: 1), writer.body { JobBatch.pack(entries, into: $0) }]
        case .heartbeat(let features):
            if features.isEmpty {
                [writer.header("heartbeat", count: 0)]
            } else {
                [writer.header("heartbeat", { w in
                    w.packStrings(features)
                }, count: 1)]
            }
        case .error(let ref, let code, let message):
            AuthorityReply.error(ref: ref, code: code, message: message).frames(writer)
        case .cancel(let job):
            [writer.header("cancel", { $0.packUInt(job.actionSeq); $0.packUInt(UInt64(job.effectIndex)) }, count: 2)]
        case .subscribe(let run, let id, let kind, let after, let payload):
            [writer.header("subscribe", { w in
                w.packUInt(run); w.packString(id); w.packString(kind)
                if let after { w.packUInt(after) } else { w.packNil() }
            }, count: 4), payload]
        case .unsubscribe(let run):
            [writer.header("unsubscribe", { $0.packUInt(run) }, count: 1)]
        }
    }
}
