import MessagePack
import ReactorWire
import ZeroMQ

/// The bench's subscriber to the authority's feed snapshots (`reactor-bench peer snapshot-sub`):
/// it makes the authority publish them while the state phase measures its loop's pauses.
///
/// Subscribes to `snapshot` and `heartbeat`, learns the authority's version from the first one
/// (an idle authority sends a heartbeat every second), says `ready`, then reads every message
/// until one names `versions` more than that (the authority publishes a snapshot of the final
/// version once the load ends), and reports how many snapshots arrived, how many of them were
/// published during the load (versions strictly between the first seen and the last), their
/// bytes and their versions.
enum BenchSnapshotSubscriber {
    static func run(feed: String, versions more: UInt64, timeoutSeconds: Double) -> Int32 {
        RawZMQBaseline.run("snapshot-sub") { context in
            let socket = try ZMQSocket(context: context, type: .sub)
            defer { socket.close() }
            try socket.set(.receiveHighWaterMark, 0)
            try socket.set(.linger, 0)
            for topic in [FeedMessage.Topic.snapshot, FeedMessage.Topic.heartbeat] { try socket.set(.subscribe, topic) }
            try socket.connect(feed)
            let poller = ZMQPoller()
            _ = try poller.register(socket)
            let deadline = MonotonicClock.nanoseconds() + UInt64(timeoutSeconds * 1e9)
            var versions: [MessagePackValue] = []
            var bytes = 0
            var reached: UInt64?
            var until: UInt64 = .max
            while reached.map({ $0 < until }) ?? true {
                guard MonotonicClock.nanoseconds() < deadline else {
                    throw RawZMQBaseline.BaselineFailure("no snapshot or heartbeat of version \(until) within \(timeoutSeconds) s (reached \(reached ?? 0), \(versions.count) snapshots)")
                }
                if let reached, until == .max {
                    until = reached + more
                    Output.line(MessagePackValue.object([("event", "ready"), ("version", .whole(reached))]).rendered)
                }
                guard try poller.poll(timeout: 100) > 0 else { continue }
                while let frames = try socket.tryReceiveMultipart() {
                    switch try? FeedMessage(frames: frames) {
                    case .snapshot(let version, _, let payload)?:
                        versions.append(.whole(version))
                        bytes += payload.count
                        reached = max(reached ?? 0, version)
                    case .heartbeat(let version, _)?:
                        reached = max(reached ?? 0, version)
                    default:
                        continue
                    }
                }
            }
            let base = until - more
            let during = versions.filter { ($0.intValue ?? 0) > Int64(base) && ($0.intValue ?? 0) < Int64(until) }.count
            Output.line(MessagePackValue.object([
                ("event", "result"), ("snapshots", .whole(versions.count)), ("during_load", .whole(during)), ("bytes", .whole(bytes)),
                ("versions", .array(versions)),
            ]).rendered)
        }
    }
}
