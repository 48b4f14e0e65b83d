import MessagePack
import TestSupport

/// Phase 4: one action in flight at a time, twice.
///
/// Round trips are compared in pairs: the client alternates rounds of 500 actions with rounds
/// of 500 raw libzmq round trips (the baseline's DEALER<->ROUTER exchange, against a `raw-echo`
/// started for the phase), so both figures come from the same minutes of the same machine.
/// The latency targets use these paired raw figures.
///
/// First the client alone with the authority: *action -> ack*, the figure comparable with the
/// raw round trip (two processes in both). Then again with an observer following the feed:
/// the client records when it sent each `countUp` and when its ack arrived (with the version
/// it carries), the observer when it first held each version. Both use the machine's
/// monotonic clock, so *action -> observer sees its version* comes from the same timeline; the
/// ack latency of this run is reported too (the observer's wake-ups share the cores). The first
/// tenth of the actions (at most 1,000) of each run warm up and are not counted.
enum LatencyPhase {
    typealias Sample = (send: Int64, ack: Int64, version: Int64)

    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        let warmup = min(plan.samples / 10, 1_000)
        let count = plan.samples + warmup
        let limit = BenchPlan.limit(count, minimumRate: 250)
        let echo = try ChildProcess.peer(["raw-echo", "--reply", String(results.sizes.ack)], name: "raw-echo-paired")
        try await BaselinePhase.withChildren([echo]) {
            guard let endpoint = await echo.waitForEvent("ready", timeout: .seconds(10))?["endpoint"]?.stringValue else {
                throw BenchError.phase("raw-echo did not bind\n\(echo.logTail())")
            }
            let paired = ["--record", "--echo", endpoint, "--frames", "\(results.sizes.actionHeader),\(results.sizes.actionPayload)"]
            try await measure(plan: plan, warmup: warmup, count: count, limit: limit, paired: paired, results: &results)
        }
    }

    private static func measure(plan: BenchPlan, warmup: Int, count: Int, limit: Duration, paired: [String], results: inout BenchResults) async throws {
        Output.error("bench: latency — \(plan.samples.grouped) countUp actions one at a time (after \(warmup.grouped) to warm up), no observer, in rounds with as many raw round trips")
        let alone = try await BenchCluster.authority(app: "counter").run { cluster in
            let client = try cluster.client(workload: "countUp", count: count, window: 1, extra: paired)
            return try await cluster.result(of: client, timeout: limit)
        }
        var ackAlone = LatencyRecorder(capacity: plan.samples)
        for sample in samples(alone).dropFirst(warmup) { ackAlone.record(nanoseconds: UInt64(max(sample.ack - sample.send, 0))) }

        Output.error("bench: latency — the same with an observer following the feed")
        let cluster = try await BenchCluster.authority(app: "counter")
        let (sent, seen) = try await cluster.run { cluster in
            let observer = try await cluster.observer(field: "count", untilVersion: count, record: true, timeout: limit)
            let client = try cluster.client(workload: "countUp", count: count, window: 1, extra: paired)
            return (try await cluster.result(of: client, timeout: limit), try await cluster.result(of: observer, timeout: limit))
        }
        let samples = Self.samples(sent).dropFirst(warmup)
        let observed = (seen["seen"]?.arrayValue ?? []).compactMap { entry -> (version: Int64, at: Int64)? in
            guard let parts = entry.arrayValue, parts.count == 2, let version = parts[0].intValue, let at = parts[1].intValue else { return nil }
            return (version, at)
        }
        var ack = LatencyRecorder(capacity: samples.count)
        var visible = LatencyRecorder(capacity: samples.count)
        var cursor = 0
        for sample in samples {
            ack.record(nanoseconds: UInt64(max(sample.ack - sample.send, 0)))
            // The first snapshot the observer held at or past the action's version.
            while cursor < observed.count && observed[cursor].version < sample.version { cursor += 1 }
            if cursor < observed.count { visible.record(nanoseconds: UInt64(max(observed[cursor].at - sample.send, 0))) }
        }
        let latency = BenchResults.Latency(
            ack: ackAlone.summary, ackObserved: ack.summary, observed: visible.summary,
            rawPaired: LatencyRecorder.Summary(json: alone["raw_round_trips"]) ?? .init(),
            rawPairedObserved: LatencyRecorder.Summary(json: sent["raw_round_trips"]) ?? .init())
        results.latency = latency
        results.check("latency_complete", "latency: every action acked, and seen by the observer",
                      alone["acked"]?.intValue == Int64(count) && alone["errors"]?.intValue == 0 && ackAlone.count == plan.samples
                          && sent["acked"]?.intValue == Int64(count) && sent["errors"]?.intValue == 0 && visible.count == samples.count && samples.count == plan.samples)
        Output.error("bench:   ack p50 \(latency.ack.p50) µs p99 \(latency.ack.p99) µs alone (raw \(latency.rawPaired.p50) / \(latency.rawPaired.p99) µs); with the observer ack p50 \(latency.ackObserved.p50) µs p99 \(latency.ackObserved.p99) µs, observer p50 \(latency.observed.p50) µs p99 \(latency.observed.p99) µs")
    }

    /// The client's `[send_ns, ack_ns, version]` triples.
    private static func samples(_ result: MessagePackValue) -> [Sample] {
        (result["samples"]?.arrayValue ?? []).compactMap { sample -> Sample? in
            guard let parts = sample.arrayValue, parts.count == 3, let send = parts[0].intValue, let ack = parts[1].intValue,
                  let version = parts[2].intValue else { return nil }
            return (send, ack, version)
        }
    }
}
