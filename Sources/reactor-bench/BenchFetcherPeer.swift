import MessagePack
import ReactorApps
import ReactorBus
import ReactorLog
import ZeroMQ

/// The bench's fetcher (`reactor-bench peer fetcher`): fetches the whole state again and again,
/// as a late joiner or a reconnecting observer does, while the state phase measures the
/// authority's loop's pauses.
///
/// Each fetch is ``ActionClient/snapshotPayload()`` (chunks of 1 MiB, asked one after the other).
/// The first fetch learns the authority's version and says `ready`; then one fetch starts every
/// `interval` after the last one ended, until one is of `versions` more than that first (the load
/// is over) or the time runs out. Reports how many fetches there were, how many of them were of a
/// version strictly between the first and the last (fetched during the load), their versions,
/// bytes and the longest one's time.
struct BenchFetcherPeer {
    var endpoint: String
    var versions: UInt64
    var intervalMilliseconds: UInt64
    var timeoutSeconds: Double

    func run() async throws -> Int32 {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let configuration = ActionClientConfiguration(actionsEndpoint: endpoint, timeout: .seconds(min(timeoutSeconds, 30)))
        let client = try ActionClient<Catalog>(configuration: configuration, logger: Logger(label: "bench fetcher", level: .warning), context: context)
        try client.start()
        defer { client.close() }
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeoutSeconds * 1e9)
        let first = try await client.snapshotPayload()
        let until = first.version + versions
        Output.line(MessagePackValue.object([("event", "ready"), ("version", .whole(first.version))]).rendered)
        var fetched: [MessagePackValue] = []
        var bytes = 0
        var longest: UInt64 = 0
        var reached = first.version
        while reached < until {
            guard MonotonicClock.nanoseconds() < deadline else {
                Output.error("peer fetcher: no fetch of version \(until) within \(timeoutSeconds) s (reached \(reached), \(fetched.count) fetches)")
                return 1
            }
            try await Task.sleep(for: .milliseconds(intervalMilliseconds))
            let started = MonotonicClock.nanoseconds()
            let fetch = try await client.snapshotPayload()
            longest = max(longest, MonotonicClock.nanoseconds() - started)
            fetched.append(.whole(fetch.version))
            bytes += fetch.payload.count
            reached = max(reached, fetch.version)
        }
        let during = fetched.filter { ($0.intValue ?? 0) > Int64(first.version) && ($0.intValue ?? 0) < Int64(until) }.count
        Output.line(MessagePackValue.object([
            ("event", "result"), ("fetches", .whole(fetched.count)), ("during_load", .whole(during)), ("bytes", .whole(bytes)),
            ("longest_ms", .number(Double(longest) / 1e6, places: 1)), ("versions", .array(fetched)),
        ]).rendered)
        return 0
    }
}
