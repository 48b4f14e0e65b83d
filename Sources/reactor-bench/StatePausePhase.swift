import Foundation
import MessagePack

/// The end of the state phase: how long the authority's loop stops while snapshots of the
/// largest state are written. The state phase's largest data directory (its final snapshot
/// written at stop) is copied twice; on each copy an authority restarts, recovers, and takes
/// the state phase's `put` mix (``Catalog/benchMix``) with a snapshot due every tenth of its
/// puts (20,000 records in a full run; and every second), while the ping probe (``BenchPingPeer``) keeps one `ping` in flight every
/// 2 ms: once with the snapshots taken from the loop's own state (`--snapshot-replica-above
/// off`: each makes the loop copy the whole state at its next change), once written from a
/// snapshot replica (`--snapshot-replica-above 0`).
///
/// Figures: for each, ping p50/p99/max (max = the loop's longest pause), pings over 50 ms,
/// snapshots written and actions/s; the ratio of the longest pauses, replica / checkpoints
/// (target <= 0.5x). Check: every action acked, and at least two snapshots written in each run.
enum StatePausePhase {
    static func run(directory: String, stateBytes: Int, plan: BenchPlan, results: inout BenchResults) async throws {
        let count = plan.stateActions
        // 20,000 for the full run's 200,000 puts: about ten snapshots due during the load.
        let every = max(count / 10, 100)
        for replica in [false, true] {
            let label = replica ? "replica" : "checkpoints"
            Output.error("bench: state — restarted on the \(stateBytes.grouped)-byte state, \(count.grouped) puts, a snapshot every \(every.grouped) records from \(replica ? "a snapshot replica" : "the loop's checkpoints"), ping every 2 ms")
            let copy = directory + "-" + label
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: directory, toPath: copy)
            defer { try? FileManager.default.removeItem(atPath: copy) }
            let cluster = try await BenchCluster.authority(
                app: "catalog",
                extra: ["--data", copy, "--snapshot-every", String(every), "--snapshot-interval", "1", "--snapshot-replica-above", replica ? "0" : "off"],
                name: "authority-state-pauses-\(label)")
            let limit = BenchPlan.limit(count, minimumRate: 1_000, base: 60)
            let (sent, probed) = try await cluster.run { cluster in
                let probe = try cluster.peer(["ping", "--endpoint", cluster.endpoints.actions, "--interval-ms", "2", "--until-accepted", String(count),
                                              "--until-snapshots", "2", "--timeout", String(limit.wholeMilliseconds / 1_000)], name: "ping")
                let client = try cluster.client(workload: "catalog", count: count, window: plan.window, extra: ["--stats"])
                return (try await cluster.result(of: client, timeout: limit), try await cluster.result(of: probe, timeout: limit))
            }
            let run = BenchResults.Pause(probed: probed, sent: sent, actions: count, snapshotEvery: every)
            results.statePauses.append(.init(replica: replica, run: run))
            results.check("state_pauses_\(label)", "state pauses, snapshots from \(label): every action acked, at least 2 snapshots written",
                          run.acked == count && sent["errors"]?.intValue == 0 && run.snapshotsWritten >= 2)
            Output.error("bench:   ping p50 \(run.rtt.p50) µs p99 \(run.rtt.p99) µs max \(run.rtt.max) µs (\(run.over50ms) over 50 ms), \(run.snapshotsWritten) snapshots, \(Int(run.ackedPerSecond).grouped) acked/s")
        }
    }
}
