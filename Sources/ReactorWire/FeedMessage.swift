import MessagePack
import ReactorCore

/// What the authority publishes on its feed.
package enum FeedMessage: Sendable, Equatable {
    /// The whole state at `version`; the payload is the app's state.
    case snapshot(version: UInt64, actionSeq: UInt64, payload: [UInt8])
    /// One applied mutation; the payload is the app's mutation.
    case mutation(version: UInt64, actionSeq: UInt64, origin: MutationOrigin, payload: [UInt8])
    /// The current version, published when the authority is idle.
    case heartbeat(version: UInt64, actionSeq: UInt64)
    /// A projection's new value at `version` (published only when it changed); the payload is
    /// the projection's value. Topic `projection:NAME`.
    case projection(name: String, version: UInt64, actionSeq: UInt64, payload: [UInt8])
    /// What happened to a job at the authority (dispatched to a worker, done, failed,
    /// cancelled): published only while someone subscribes to topic `job` (an inspector).
    case job(JobEvent)

    /// The topic frames, which SUB sockets filter on by prefix.
    package enum Topic {
        package static let snapshot = "snapshot"
        package static let mutation = "mutation"
        package static let heartbeat = "heartbeat"
        package static let job = "job"
        /// The prefix of projection topics: `projection:NAME`.
        package static let projectionPrefix = "projection:"

        /// The topic of projection `name`.
        package static func projection(_ name: String) -> String { projectionPrefix + name }
    }

    /// Decodes the frames a SUB socket receives.
    package init(frames: [[UInt8]]) throws(ProtocolError) {
        guard frames.count >= 2 else { throw .malformed("feed messages have a topic and a header frame") }
        let topic = String(decoding: frames[0], as: UTF8.self)
        self = try WireHeader.read(frames[1], topic: topic) { header throws(ProtocolError) -> Self in
            switch topic {
            case Topic.snapshot:
                guard frames.count == 3 else { throw .malformed("snapshot needs a payload frame") }
                try header.expect(fields: 2)
                return .snapshot(version: try header.uint(0, "version"), actionSeq: try header.uint(1, "action_seq"), payload: frames[2])
            case Topic.mutation:
                guard frames.count == 3 else { throw .malformed("mutation needs a payload frame") }
                try header.expect(fields: 5)
                let index = UInt32(clamping: try header.uint(4, "index"))
                let origin: MutationOrigin
                switch try header.string(2, "origin") {
                case "sync": origin = .sync(index: index)
                case "async": origin = .async(job: JobID(actionSeq: try header.uint(1, "action_seq"), effectIndex: try header.uint32(3, "effect_index")), emitIndex: index)
                case "failure": origin = .failure(job: JobID(actionSeq: try header.uint(1, "action_seq"), effectIndex: try header.uint32(3, "effect_index")), index: index)
                case "cancelled": origin = .cancelled(job: JobID(actionSeq: try header.uint(1, "action_seq"), effectIndex: try header.uint32(3, "effect_index")), index: index)
                case let other: throw .malformed("unknown mutation origin '\(other)'")
                }
                return .mutation(version: try header.uint(0, "version"), actionSeq: try header.uint(1, "action_seq"), origin: origin, payload: frames[2])
            case Topic.heartbeat:
                try header.expect(fields: 2)
                return .heartbeat(version: try header.uint(0, "version"), actionSeq: try header.uint(1, "action_seq"))
            case Topic.job:
                try header.expect(fields: 7)
                guard let event = JobEvent.Event(rawValue: try header.string(2, "event")) else {
                    throw .malformed("unknown job event '\((try? header.string(2, "event")) ?? "")'")
                }
                return .job(JobEvent(event, job: JobID(actionSeq: try header.uint(0, "action_seq"), effectIndex: try header.uint32(1, "effect_index")),
                                     worker: try header.optionalString(3, "worker"), dispatch: try header.uint32(4, "dispatch"),
                                     attempts: try header.optionalUInt32(5, "attempts"), microseconds: try header.optionalUInt(6, "microseconds")))
            case _ where topic.hasPrefix(Topic.projectionPrefix):
                guard frames.count == 3 else { throw .malformed("projection needs a payload frame") }
                try header.expect(fields: 2)
                return .projection(name: String(topic.dropFirst(Topic.projectionPrefix.count)), version: try header.uint(0, "version"),
                                   actionSeq: try header.uint(1, "action_seq"), payload: frames[2])
            default:
                throw ProtocolError(.unknownKind, "unknown feed topic '\(topic)'")
            }
        }
    }

    /// A snapshot's topic and header frames, for a publisher that sends its payload frame itself.
    package static func snapshotHead(version: UInt64, actionSeq: UInt64, _ writer: HeaderWriter) -> [[UInt8]] {
        [Array(Topic.snapshot.utf8), writer.feedHeader(count: 2) { $0.packUInt(version); $0.packUInt(actionSeq) }]
    }

    /// The frames to publish.
    package func frames(_ writer: HeaderWriter) -> [[UInt8]] {
        switch self {
        case .snapshot(let version, let actionSeq, let payload):
            Self.snapshotHead(version: version, actionSeq: actionSeq, writer) + [payload]
        case .mutation(let version, let actionSeq, let origin, let payload):
            [Array(Topic.mutation.utf8), writer.feedHeader(count: 5) { w in
                w.packUInt(version); w.packUInt(actionSeq)
                switch origin {
                case .sync(let index):
                    w.packString("sync"); w.packNil(); w.packUInt(UInt64(index))
                case .async(let job, let index):
                    w.packString("async"); w.packUInt(UInt64(job.effectIndex)); w.packUInt(UInt64(index))
                case .failure(let job, let index):
                    w.packString("failure"); w.packUInt(UInt64(job.effectIndex)); w.packUInt(UInt64(index))
                case .cancelled(let job, let index):
                    w.packString("cancelled"); w.packUInt(UInt64(job.effectIndex)); w.packUInt(UInt64(index))
                }
            }, payload]
        case .heartbeat(let version, let actionSeq):
            [Array(Topic.heartbeat.utf8), writer.feedHeader(count: 2) { $0.packUInt(version); $0.packUInt(actionSeq) }]
        case .projection(let name, let version, let actionSeq, let payload):
            [Array(Topic.projection(name).utf8), writer.feedHeader(count: 2) { $0.packUInt(version); $0.packUInt(actionSeq) }, payload]
        case .job(let event):
            [Array(Topic.job.utf8), writer.feedHeader(count: 7) { w in
                w.packUInt(event.job.actionSeq); w.packUInt(UInt64(event.job.effectIndex)); w.packString(event.event.rawValue)
                if let worker = event.worker { w.packString(worker) } else { w.packNil() }
                w.packUInt(UInt64(event.dispatch))
                if let attempts = event.attempts { w.packUInt(UInt64(attempts)) } else { w.packNil() }
                if let microseconds = event.microseconds { w.packUInt(microseconds) } else { w.packNil() }
            }]
        }
    }
}
