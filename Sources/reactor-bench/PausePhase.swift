import MessagePack
/// Phase 8: how long the authority's loop stops answering while snapshots are written.
///
/// Two runs against a journaling `counter` authority with 2 idle workers (heartbeats every
/// second, dead after three missed): a client pipelines `countUp` spread over `pauseClients`
/// client identities, so the dedup ledger every snapshot carries grows as in production, while a
/// ping probe (``BenchPingPeer``) keeps one `ping` in flight every 2 ms. The first run writes no
/// snapshot during the load, the second one every `pauseSnapshotEvery` journal records. Figures:
/// the probe's round trips (p50, p99, max: the longest pause), the authority's
/// `snapshots_written` and `workers_lost`. Targets: the longest round trip with snapshots at most
/// 2x the p99 without, and no worker lost. Check: every action acked (and, in the second run,
/// at least one snapshot written: the probe waits for it).
enum PausePhase {
    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        for snapshotEvery in [nil, plan.pauseSnapshotEvery] {
            let count = plan.pauseActions
            let label = snapshotEvery.map { "a snapshot every \($0.grouped) records" } ?? "no snapshot during the load"
            Output.error("bench: pause — \(count.grouped) countUp actions from \(plan.pauseClients) client identities, ping every 2 ms, \(label)")
            let directory = BenchPaths.temporaryFile("data-pause-\(snapshotEvery == nil ? "without" : "with")")
            let every = snapshotEvery.map(String.init) ?? "1000000000"
            let cluster = try await BenchCluster.authority(
                app: "counter", extra: ["--data", directory, "--snapshot-every", every, "--snapshot-interval", "3600"]
                    + (plan.snapshotDirectory.map { ["--snapshot-dir", $0 + "/" + directory.split(separator: "/").joined(separator: "_")] } ?? []),
                name: "authority-pause-\(snapshotEvery == nil ? "without" : "with")")
            let limit = BenchPlan.limit(count, minimumRate: 10_000, base: 60)
            let (sent, probed) = try await cluster.run { cluster in
                try cluster.addWorkers(plan.workers, concurrency: plan.workerConcurrency)
                let probe = try cluster.peer(["ping", "--endpoint", cluster.endpoints.actions, "--interval-ms", "2", "--until-accepted", String(count),
                                              "--until-snapshots", snapshotEvery == nil ? "0" : "1",
                                              "--timeout", String(limit.wholeMilliseconds / 1_000)], name: "ping")
                let client = try cluster.client(workload: "countUp", count: count, window: plan.window,
                                                extra: ["--clients", String(plan.pauseClients), "--wait-workers", String(plan.workers)])
                return (try await cluster.result(of: client, timeout: limit), try await cluster.result(of: probe, timeout: limit))
            }
            let run = BenchResults.Pause(probed: probed, sent: sent, actions: count, snapshotEvery: snapshotEvery)
            results.pause.append(run)
            results.check("pause_\(snapshotEvery == nil ? "without" : "with")_acked", "pause \(label): every action acked",
                          run.acked == count && sent["errors"]?.intValue == 0 && (snapshotEvery == nil || run.snapshotsWritten > 0))
            Output.error("bench:   ping p50 \(run.rtt.p50) µs p99 \(run.rtt.p99) µs max \(run.rtt.max) µs (\(run.over100ms) over 100 ms), \(run.snapshotsWritten) snapshots, \(run.workersLost) workers lost, \(Int(run.ackedPerSecond).grouped) acked/s")
        }
    }
}

extension BenchResults.Pause {
    /// A run from the ping probe's result (`probed`) and the client's (`sent`).
    init(probed: MessagePackValue, sent: MessagePackValue, actions: Int, snapshotEvery: Int?) {
        self.init(snapshotEvery: snapshotEvery, actions: actions, acked: Int(sent["acked"]?.intValue ?? 0), ackedPerSecond: sent["per_second"]?.doubleValue ?? 0,
                  rtt: LatencyRecorder.Summary(json: probed["rtt"]) ?? .init(), over100ms: Int(probed["over_100ms"]?.intValue ?? 0),
                  over50ms: probed["slow_pings"]?.arrayValue?.count ?? 0,
                  snapshotsWritten: Int(probed["stats"]?["snapshots_written"]?.intValue ?? 0),
                  workersLost: Int(probed["stats"]?["workers_lost"]?.intValue ?? 0))
    }
}
