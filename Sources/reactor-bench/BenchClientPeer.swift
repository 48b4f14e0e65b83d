import Foundation
import MessagePack
import ReactorApps
import ReactorBus
import ReactorWire
import ZeroMQ

/// The bench's client role: pipelines actions to an authority over the wire protocol and times
/// the acks, like the raw baseline's client times its echoes.
///
/// It speaks docs/PROTOCOL.md directly over one DEALER (a ReactorBus ``ZMQSocket``): headers are
/// packed with a reused `MessagePackWriter`, answers decoded with ``AuthorityReply``. It keeps
/// `window` actions unacked, so the figure is the authority's, not a scheduler's. Each action
/// is sent once (no resends: the bench wants to see a loss, not hide it).
///
/// Before timing it pings the authority until it answers (and, with `waitWorkers`, polls
/// `stats` until that many workers registered); after, it can fetch the snapshot (to check a
/// field of the final state) and the authority's counters. Prints `progress` events every
/// `progressEvery` acks and one `result` event.
struct BenchClientPeer {
    /// What to send and how.
    struct Options {
        var endpoint: String
        var workload: Workload
        var count: Int
        var window: Int
        /// Stop issuing new actions after this long (the acks of those in flight are awaited).
        var maxSeconds: Double?
        /// Record `(send, ack, version)` of every action (use with window 1).
        var recordSamples: Bool
        /// A top-level field of the final snapshot to report (`count`, `adjustments`).
        var verifyField: String?
        var fetchStats: Bool
        var waitWorkers: Int
        var progressEvery: Int
        /// A `raw-echo` to time round trips against, between the actions (window 1 only).
        var echoEndpoint: String? = nil
        var echoFrameSizes: [Int] = []
        /// Actions (and raw round trips) per round when interleaving.
        var roundSize = 500
        /// Client identities the actions are spread over, in turn, each with its own
        /// `client_seq` from 1 (the authority's dedup ledger remembers each); 1 without `--clients`.
        var clients = 1
    }

    /// The actions of a run.
    enum Workload: String, CaseIterable {
        case countUp, countUpAsync, inventory, catalog

        /// The encoded payloads, used in turn.
        func payloads() throws -> [[UInt8]] {
            let encoder = MessagePackEncoder()
            switch self {
            case .countUp: return [try encoder.encode(Counter.Action.countUp)]
            case .countUpAsync: return [try encoder.encode(Counter.Action.countUpAsync)]
            case .inventory:
                let items = Inventory().itemCount
                return try (0..<items).map { try encoder.encode(Inventory.Action.adjust(item: $0, by: $0.isMultiple(of: 2) ? 1 : -1)) }
            case .catalog:
                return try Catalog.benchMix.map { try encoder.encode($0) }
            }
        }
    }

    /// No answer at all for this long ends the run as failed (seconds).
    static let stallSeconds: UInt64 = 30

    let options: Options
    private let socket: ZMQSocket
    private let writer = MessagePackWriter()
    private let clientID = "bench-" + UUID().uuidString
    private let poller = ZMQPoller()

    init(options: Options, context: ZMQContext) throws {
        self.options = options
        socket = try ZMQSocket(context: context, type: .dealer)
        try socket.set(.linger, 0)
        try socket.set(.sendHighWaterMark, 0)
        try socket.set(.receiveHighWaterMark, 0)
        try socket.set(.maxMessageSize, Int64(64 << 20))
        try socket.connect(options.endpoint)
        _ = try poller.register(socket)
    }

    /// Runs the whole role; the exit code of the process.
    func run() throws -> Int32 {
        defer { socket.close() }
        let payloads = try options.workload.payloads()
        guard case .pong = try request("ping", timeoutSeconds: 15) else { return failed("the authority at \(options.endpoint) does not answer") }
        // Acks in batches where the authority sends them (an older one answers unknown_kind).
        _ = try request("features", timeoutSeconds: 5, features: ClientFeature.all)
        if options.waitWorkers > 0 {
            let deadline = MonotonicClock.milliseconds() + 20_000
            while true {
                if case .stats(_, let counters) = try request("stats", timeoutSeconds: 5), counters["workers"] ?? 0 >= UInt64(options.waitWorkers) { break }
                guard MonotonicClock.milliseconds() < deadline else { return failed("fewer than \(options.waitWorkers) workers registered") }
                usleep(20_000)
            }
        }

        var sent = 0
        var acked = 0
        var errors = 0
        var firstError: String?
        var lastVersion: UInt64 = 0
        var actionBytes = 0
        var ackBytes = 0
        var target = options.count
        var samples: [(send: UInt64, ack: UInt64, version: UInt64)] = []
        var sendTimes: [UInt64] = []
        if options.recordSamples {
            samples.reserveCapacity(options.count)
            sendTimes = [UInt64](repeating: 0, count: options.count + 1)
        }
        var raw: RawZMQBaseline.RoundTripper?
        var rawLatency = LatencyRecorder()
        if let echo = options.echoEndpoint {
            guard options.window == 1, let tripper = RawZMQBaseline.RoundTripper(context: socket.context, endpoint: echo, frameSizes: options.echoFrameSizes, warmup: 200) else {
                return failed("the raw echo at \(echo) does not answer (or the window is not 1)")
            }
            raw = tripper
            rawLatency = LatencyRecorder(capacity: options.count)
        }
        let started = MonotonicClock.nanoseconds()
        let stopSendingAt = options.maxSeconds.map { started + UInt64($0 * 1e9) }
        var lastAnswer = MonotonicClock.milliseconds()
        var nextProgress = options.progressEvery

        /// Counts one ack (alone or in an `acks` message), with its sample when recording.
        func record(clientSeq: UInt64, version: UInt64) {
            acked += 1
            lastVersion = max(lastVersion, version)
            if options.recordSamples, clientSeq >= 1, Int(clientSeq) < sendTimes.count {
                samples.append((sendTimes[Int(clientSeq)], MonotonicClock.nanoseconds(), version))
            }
        }

        while acked + errors < target {
            while sent < target && sent - (acked + errors) < options.window {
                if let raw, sent.isMultiple(of: options.roundSize) {
                    // A round of raw round trips between two rounds of actions (none in flight).
                    for _ in 0..<min(options.roundSize, target - sent) {
                        guard let nanoseconds = raw.roundTrip() else { return failed("the raw echo stopped answering") }
                        rawLatency.record(nanoseconds: nanoseconds)
                    }
                }
                let seq = UInt64(sent / options.clients + 1)
                writer.reset()
                writer.packArrayHeader(4)
                writer.packUInt(1)
                writer.packString("action")
                writer.packString(options.clients == 1 ? clientID : clientID + "-" + String(sent % options.clients))
                writer.packUInt(seq)
                let payload = payloads[sent % payloads.count]
                if options.recordSamples { sendTimes[sent + 1] = MonotonicClock.nanoseconds() }
                try writer.withUnsafeBytes { header in try socket.send(header, more: true) }
                try socket.send(payload)
                actionBytes += writer.count + payload.count
                sent += 1
            }
            if let stopSendingAt, target > sent, MonotonicClock.nanoseconds() >= stopSendingAt { target = sent }
            var answered = false
            while let frames = try socket.tryReceiveMultipart() {
                answered = true
                switch try? AuthorityReply(frames: frames) {
                case .ack(let clientSeq, _, let version):
                    ackBytes += frames.reduce(0) { $0 + $1.count }
                    record(clientSeq: clientSeq, version: version)
                case .acks(let entries):
                    ackBytes += frames.reduce(0) { $0 + $1.count }
                    for ack in entries { record(clientSeq: ack.clientSeq, version: ack.version) }
                case .error(_, let code, let message):
                    errors += 1
                    if firstError == nil { firstError = "\(code.rawValue): \(message)" }
                default:
                    break
                }
                if acked + errors >= target { break }
            }
            if answered {
                lastAnswer = MonotonicClock.milliseconds()
                if options.progressEvery > 0 && acked >= nextProgress {
                    Output.line(MessagePackValue.object([("event", "progress"), ("acked", .whole(acked)), ("at_ns", .whole(MonotonicClock.nanoseconds()))]).rendered)
                    while acked >= nextProgress { nextProgress += options.progressEvery }
                }
            } else if acked + errors < target {
                if MonotonicClock.milliseconds() - lastAnswer > Self.stallSeconds * 1_000 {
                    return failed("no answer for \(Self.stallSeconds) s after \(acked) acks and \(errors) errors")
                }
                _ = try poller.poll(timeout: 100)
            }
        }
        let finished = MonotonicClock.nanoseconds()
        let seconds = Double(finished - started) / 1e9

        var result: [(String, MessagePackValue)] = [
            ("event", "result"), ("workload", .string(options.workload.rawValue)), ("window", .whole(options.window)),
            ("sent", .whole(sent)), ("acked", .whole(acked)), ("errors", .whole(errors)),
            ("first_error", firstError.map(MessagePackValue.string) ?? .nil),
            ("started_ns", .whole(started)), ("finished_ns", .whole(finished)), ("seconds", .number(seconds, places: 4)),
            ("per_second", .number(Double(acked) / max(seconds, 1e-9), places: 0)),
            ("cpu_seconds", .number(ProcessCPU.ownSeconds(), places: 4)),
            ("last_version", .whole(lastVersion)),
            ("action_bytes", .number(Double(actionBytes) / Double(max(sent, 1)), places: 1)),
            ("ack_bytes", .number(Double(ackBytes) / Double(max(acked, 1)), places: 1)),
        ]
        if raw != nil {
            result.append(("raw_round_trips", rawLatency.summary.json))
        }
        if options.recordSamples {
            // One [send_ns, ack_ns, version] triple per action, for the latency phase.
            result.append(("samples", .array(samples.map { .array([.whole($0.send), .whole($0.ack), .whole($0.version)]) })))
        }
        if let field = options.verifyField {
            guard case .snapshot(_, let version, _, _, let payload) = try request("snapshot", timeoutSeconds: 15) else {
                return failed("no snapshot after the run")
            }
            result.append(("final_version", .whole(version)))
            result.append(("final_state_bytes", .whole(payload.count)))
            result.append(("final_field", Self.field(field, of: payload).map(MessagePackValue.whole) ?? .nil))
        }
        if options.fetchStats {
            guard case .stats(_, let counters) = try request("stats", timeoutSeconds: 15) else { return failed("no stats after the run") }
            result.append(("stats", .object(counters.sorted { $0.key < $1.key }.map { ($0.key, .whole($0.value)) })))
        }
        Output.line(MessagePackValue.object(result).rendered)
        return 0
    }

    /// Sends a one-frame request (`ping`, `snapshot`, `stats`, or `features` naming `features`)
    /// and waits for its answer (for `features`, an error too), dropping any other message (late
    /// acks) meanwhile.
    private func request(_ kind: String, timeoutSeconds: UInt64, features: [String]? = nil) throws -> AuthorityReply? {
        let id = UInt64(1) << 63 | UInt64.random(in: 1...UInt64(UInt32.max))
        try socket.send(HeaderWriter().header(kind, { w in
            w.packUInt(id)
            if let features { w.packStrings(features) }
        }, count: features == nil ? 1 : 2))
        let deadline = MonotonicClock.milliseconds() + timeoutSeconds * 1_000
        var resent = MonotonicClock.milliseconds()
        while MonotonicClock.milliseconds() < deadline {
            _ = try poller.poll(timeout: 100)
            while let frames = try socket.tryReceiveMultipart() {
                guard let reply = try? AuthorityReply(frames: frames) else { continue }
                switch reply {
                case .pong(let answered, _, _, _, _, _, _) where answered == id: return reply
                case .snapshot(let answered, _, _, _, _) where answered == id: return reply
                case .stats(let answered, _) where answered == id: return reply
                case .features(let answered, _) where answered == id: return reply
                case .error(let answered, _, _) where answered == id && features != nil: return reply
                default: continue
                }
            }
            // Before the connection is up a request may wait in the socket; pings are cheap to repeat.
            if kind == "ping", MonotonicClock.milliseconds() - resent >= 500 {
                resent = MonotonicClock.milliseconds()
                try writer.withUnsafeBytes { try socket.send($0) }
            }
        }
        return nil
    }

    /// The integer top-level field `name` of a MessagePack map.
    static func field(_ name: String, of payload: [UInt8]) -> Int64? {
        guard case .map(let entries)? = try? MessagePackValue(unpacking: payload) else { return nil }
        for (key, value) in entries where key == .string(name) {
            switch value {
            case .uint(let number): return Int64(clamping: number)
            case .int(let number): return number
            default: return nil
            }
        }
        return nil
    }

    private func failed(_ why: String) -> Int32 { Output.failed(role: "client", why) }
}
