/// Phase 4: one action in flight at a time.
///
/// The client records when it sent each `countUp` and when its ack arrived (with the version
/// it carries); the observer records when it first held each version. Both use the machine's
/// monotonic clock, so *action -> ack* and *action -> observer sees its version* come from
/// the same timeline. The first tenth of the actions (at most 1,000) warm up and are not counted.
enum LatencyPhase {
    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        let warmup = min(plan.samples / 10, 1_000)
        let count = plan.samples + warmup
        Output.error("bench: latency — \(plan.samples.grouped) countUp actions one at a time (after \(warmup.grouped) to warm up)")
        let limit = BenchPlan.limit(count, minimumRate: 500)
        let cluster = try await BenchCluster.authority(app: "counter")
        let (sent, seen) = try await cluster.run { cluster in
            let observer = try await cluster.observer(field: "count", untilVersion: count, record: true, timeout: limit)
            let client = try cluster.client(workload: "countUp", count: count, window: 1, extra: ["--record"])
            return (try await cluster.result(of: client, timeout: limit), try await cluster.result(of: observer, timeout: limit))
        }
        let samples = (sent["samples"]?.arrayValue ?? []).compactMap { sample -> (send: Int64, ack: Int64, version: Int64)? in
            guard let parts = sample.arrayValue, parts.count == 3, let send = parts[0].intValue, let ack = parts[1].intValue,
                  let version = parts[2].intValue else { return nil }
            return (send, ack, version)
        }.dropFirst(warmup)
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
        let latency = BenchResults.Latency(ack: ack.summary, observed: visible.summary)
        results.latency = latency
        results.check("latency_complete", "latency: every action acked and seen by the observer",
                      sent["acked"]?.intValue == Int64(count) && sent["errors"]?.intValue == 0 && visible.count == samples.count && samples.count == plan.samples)
        Output.error("bench:   ack p50 \(latency.ack.p50) µs p99 \(latency.ack.p99) µs; observer p50 \(latency.observed.p50) µs p99 \(latency.observed.p99) µs")
    }
}
