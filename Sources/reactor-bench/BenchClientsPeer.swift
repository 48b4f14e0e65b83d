import Foundation
import MessagePack
import ReactorApps
import ReactorBus
import ReactorWire
import ZeroMQ

/// The bench's many-clients role: `connections` clients at once, each its own DEALER connection
/// and client identity with `window` actions unacked, sending `countUp` round robin until
/// `count` are acked in all. It reports the aggregate acks per second and the action -> ack
/// latency over every action (each ack is matched by its connection and `client_seq`).
///
/// One process holds every connection, so the figure is the authority's handling of many peers
/// (routing, per-client ledgers and budgets), not the scheduling of a thousand processes on two
/// cores. No resends: a lost ack is a failed run.
struct BenchClientsPeer {
    let endpoint: String
    let connections: Int
    let window: Int
    let count: Int

    /// No answer at all for this long ends the run as failed (seconds).
    static let stallSeconds: UInt64 = 30

    func run(context: ZMQContext) throws -> Int32 {
        let poller = try ZMQManySocketPoller()
        var sockets: [ZMQSocket] = []
        defer { for socket in sockets { socket.close() } }
        for _ in 0..<connections {
            let socket = try ZMQSocket(context: context, type: .dealer)
            try socket.set(.linger, 0)
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.connect(endpoint)
            try poller.register(socket)
            sockets.append(socket)
        }
        let run = "bench-clients-" + UUID().uuidString.prefix(8)
        let identities = (0..<connections).map { "\(run)-\($0)" }
        let payload = try MessagePackEncoder().encode(Counter.Action.countUp)
        let writer = MessagePackWriter()
        guard try handshake(sockets, poller: poller) else { return failed("not every connection got a pong within 30 s") }

        // Per connection: the next client_seq, the unacked count, and each action's send time.
        var nextSeq = [UInt64](repeating: 1, count: connections)
        var unacked = [Int](repeating: 0, count: connections)
        var sentAt = [[UInt64]](repeating: [0], count: connections)
        var latency = LatencyRecorder(capacity: count)
        var sent = 0, acked = 0, errors = 0
        var firstError: String?
        let started = MonotonicClock.nanoseconds(), cpuBefore = ProcessCPU.ownSeconds()
        var lastAnswer = MonotonicClock.milliseconds()
        // Connections with room in their window; at first, all of them.
        var ready = Array(0..<connections)
        while acked + errors < count {
            for index in ready where sent < count {
                while unacked[index] < window && sent < count {
                    writer.reset()
                    writer.packArrayHeader(4)
                    writer.packUInt(1)
                    writer.packString("action")
                    writer.packString(identities[index])
                    writer.packUInt(nextSeq[index])
                    sentAt[index].append(MonotonicClock.nanoseconds())
                    try writer.withUnsafeBytes { header in try sockets[index].send(header, more: true) }
                    try sockets[index].send(payload)
                    poller.noteUsed(index)
                    nextSeq[index] += 1
                    unacked[index] += 1
                    sent += 1
                }
            }
            ready.removeAll(keepingCapacity: true)
            // Only the connections the poller finds readable are read: a thousand idle ones
            // would otherwise cost a thousand reads per pass (and a `poll(2)` over a thousand
            // descriptors more than the authority's work for an action).
            let readable = try poller.readable(timeout: 100)
            guard !readable.isEmpty else {
                guard MonotonicClock.milliseconds() - lastAnswer <= Self.stallSeconds * 1_000 else {
                    return failed("no answer for \(Self.stallSeconds) s after \(acked) acks and \(errors) errors")
                }
                continue
            }
            lastAnswer = MonotonicClock.milliseconds()
            for index in readable {
                while let frames = try sockets[index].tryReceiveMultipart() {
                    switch try? AuthorityReply(frames: frames) {
                    case .ack(let clientSeq, _, _):
                        acked += 1
                        unacked[index] -= 1
                        if clientSeq >= 1, Int(clientSeq) < sentAt[index].count {
                            latency.record(nanoseconds: MonotonicClock.nanoseconds() - sentAt[index][Int(clientSeq)])
                        }
                    case .error(_, let code, let message):
                        errors += 1
                        unacked[index] -= 1
                        if firstError == nil { firstError = "\(code.rawValue): \(message)" }
                    default:
                        break
                    }
                }
                if unacked[index] < window { ready.append(index) }
            }
        }
        let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
        Output.line(MessagePackValue.object([
            ("event", "result"), ("connections", .whole(connections)), ("window", .whole(window)), ("sent", .whole(sent)),
            ("acked", .whole(acked)), ("errors", .whole(errors)), ("first_error", firstError.map(MessagePackValue.string) ?? .nil),
            ("seconds", .number(seconds, places: 4)), ("per_second", .number(Double(acked) / max(seconds, 1e-9), places: 0)),
            ("latency", latency.summary.json), ("cpu_seconds", .number(ProcessCPU.ownSeconds() - cpuBefore, places: 4)),
        ]).rendered)
        return 0
    }

    /// Pings on every connection until each answered (the connections are up, the app is there).
    private func handshake(_ sockets: [ZMQSocket], poller: ZMQManySocketPoller) throws -> Bool {
        var waiting = Set(sockets.indices)
        let deadline = MonotonicClock.milliseconds() + 30_000
        var lastPing: UInt64 = 0
        while !waiting.isEmpty, MonotonicClock.milliseconds() < deadline {
            if MonotonicClock.milliseconds() - lastPing > 500 {
                for index in waiting {
                    try sockets[index].send(HeaderWriter().header("ping", { $0.packUInt(UInt64(index) + 1) }, count: 1))
                    poller.noteUsed(index)
                }
                lastPing = MonotonicClock.milliseconds()
            }
            for index in try poller.readable(timeout: 50) {
                while let frames = try sockets[index].tryReceiveMultipart() {
                    if case .pong? = try? AuthorityReply(frames: frames) { waiting.remove(index) }
                }
            }
        }
        return waiting.isEmpty
    }

    private func failed(_ message: String) -> Int32 { Output.failed(role: "clients", message) }
}
