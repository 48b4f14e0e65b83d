import Foundation
import MessagePack
import ReactorBus
import ReactorWire
import ZeroMQ

/// The bench's ping probe: measures how long the authority's loop goes without answering.
///
/// It keeps one `ping` in flight on its own DEALER and sends the next `interval` after the
/// previous one was sent (or at once when its pong came later): a pong that takes 1.2 s means the
/// loop answered nothing for about that long. Every 100 ms it also asks for `stats`, and stops
/// once the authority has accepted `untilAccepted` actions and written `untilSnapshots`
/// snapshots (so it covers the whole load of a run), reporting the round trips' percentiles, the longest, how many exceeded 100 ms, and the
/// authority's last counters (`workers_lost`, `snapshots_written`). Pings slower than 50 ms are
/// listed as `[seconds after start when sent, round trip in ms]`.
struct BenchPingPeer {
    let intervalNanoseconds: UInt64
    let untilAccepted: UInt64
    let untilSnapshots: UInt64
    let timeoutSeconds: Double
    private let socket: ZMQSocket
    private let poller = ZMQPoller()
    private let headers = HeaderWriter()

    init(endpoint: String, intervalMilliseconds: UInt64, untilAccepted: UInt64, untilSnapshots: UInt64, timeoutSeconds: Double, context: ZMQContext) throws {
        intervalNanoseconds = intervalMilliseconds * 1_000_000
        self.untilAccepted = untilAccepted
        self.untilSnapshots = untilSnapshots
        self.timeoutSeconds = timeoutSeconds
        socket = try ZMQSocket(context: context, type: .dealer)
        try socket.set(.linger, 0)
        try socket.connect(endpoint)
        _ = try poller.register(socket)
    }

    /// Runs the probe; the exit code of the process.
    func run() throws -> Int32 {
        defer { socket.close() }
        let started = MonotonicClock.nanoseconds()
        let deadline = started + UInt64(timeoutSeconds * 1e9)
        var rtts = LatencyRecorder(capacity: 100_000)
        var stalls = 0
        var longest: UInt64 = 0
        var longestAt: UInt64 = 0
        var slow: [MessagePackValue] = []
        let startedUnixMilliseconds = Int64(Date().timeIntervalSince1970 * 1_000)
        var nextID: UInt64 = 1
        var outstanding: (id: UInt64, sent: UInt64)?
        var nextPing = started
        var statsID: UInt64?
        var nextStats = started
        var counters: [String: UInt64] = [:]
        var done = false
        while !done || outstanding != nil {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return failed("no end of the load within \(timeoutSeconds) s (\(counters["actions_accepted"] ?? 0) accepted)") }
            if outstanding == nil, !done, now >= nextPing {
                try send("ping", id: nextID)
                outstanding = (nextID, now)
                nextPing = now + intervalNanoseconds
                nextID += 1
            }
            if statsID == nil, !done, now >= nextStats {
                let id = UInt64(1) << 62 | nextID
                try send("stats", id: id)
                statsID = id
                nextStats = now + 100_000_000
            }
            let wake = outstanding == nil ? nextPing : now + 1_000_000
            _ = try poller.poll(timeout: Int(min(max(wake, now) - now, 100_000_000) / 1_000_000))
            while let frames = try socket.tryReceiveMultipart() {
                let at = MonotonicClock.nanoseconds()
                switch try? AuthorityReply(frames: frames) {
                case .pong(let id, _, _, _, _, _, _) where id == outstanding?.id:
                    let rtt = at - (outstanding?.sent ?? at)
                    rtts.record(nanoseconds: rtt)
                    if rtt > 100_000_000 { stalls += 1 }
                    if rtt > 50_000_000 {
                        slow.append(.array([.number(Double(outstanding.map { $0.sent - started } ?? 0) / 1e9, places: 3), .number(Double(rtt) / 1e6)]))
                    }
                    if rtt > longest { (longest, longestAt) = (rtt, at - started) }
                    outstanding = nil
                case .stats(let id, let values) where id == statsID:
                    statsID = nil
                    counters = values
                    if values["actions_accepted"] ?? 0 >= untilAccepted, values["snapshots_written"] ?? 0 >= untilSnapshots { done = true }
                default:
                    continue
                }
            }
        }
        let result: [(String, MessagePackValue)] = [
            ("event", "result"), ("pings", .whole(rtts.count)), ("rtt", rtts.summary.json), ("over_100ms", .whole(stalls)),
            ("longest_us", .number(Double(longest) / 1_000)), ("longest_at_s", .number(Double(longestAt) / 1e9, places: 3)),
            ("slow_pings", .array(slow)), ("started_unix_ms", .whole(startedUnixMilliseconds)),
            ("seconds", .number(Double(MonotonicClock.nanoseconds() - started) / 1e9, places: 3)),
            ("stats", .object(counters.sorted { $0.key < $1.key }.map { ($0.key, .whole($0.value)) })),
        ]
        Output.line(MessagePackValue.object(result).rendered)
        return 0
    }

    private func send(_ kind: String, id: UInt64) throws {
        try socket.send(headers.header(kind, { $0.packUInt(id) }, count: 1))
    }

    private func failed(_ why: String) -> Int32 { Output.failed(role: "ping", why) }
}
