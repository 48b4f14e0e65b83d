import Foundation

/// Phase 5: what a large state costs. The `inventory` app holds 10,000 items and each action
/// adjusts one; every published snapshot carries all of them.
///
/// The authority publishes one snapshot per poll batch, not one per action, so the number of
/// snapshots per 1,000 actions falls as the load rises and publishing does not grow with the
/// actions. Figures: actions/s, the state's size, snapshots published (from the authority's
/// counters) per 1,000 actions, and the feed's bytes per second. Check: the observer's final
/// `adjustments` equals the actions sent.
enum SnapshotPhase {
    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        let count = plan.snapshotActions
        Output.error("bench: snapshot cost — inventory of \(plan.inventoryItems.grouped) items, \(count.grouped) actions touching one item each")
        let cluster = try await BenchCluster.authority(app: "inventory")
        let limit = BenchPlan.limit(count, minimumRate: 500)
        let (sent, seen) = try await cluster.run { cluster in
            let observer = try await cluster.observer(field: "adjustments", untilVersion: count, timeout: limit)
            let client = try cluster.client(workload: "inventory", count: count, window: plan.window, extra: ["--stats", "--verify-field", "adjustments"])
            return (try await cluster.result(of: client, timeout: limit), try await cluster.result(of: observer, timeout: limit))
        }
        let seconds = sent["seconds"]?.doubleValue ?? 0
        let stateBytes = Int(sent["final_state_bytes"]?.intValue ?? seen["state_bytes"]?.intValue ?? 0)
        let published = Int(sent["stats"]?["snapshots_published"]?.intValue ?? 0)
        // Each feed snapshot is the state plus a topic and a header of a few bytes.
        let feedBytes = Double(published) * Double(stateBytes + 24)
        let cost = BenchResults.SnapshotCost(
            items: plan.inventoryItems, actions: count, ackedPerSecond: sent["per_second"]?.doubleValue ?? 0, stateBytes: stateBytes,
            snapshotsPublished: published, feedBytesPerSecond: feedBytes / max(seconds, 1e-9), observerBytes: Int(seen["bytes"]?.intValue ?? 0),
            seconds: seconds)
        results.snapshot = cost
        results.check("snapshot_count", "snapshot: observer's final adjustments equal the actions sent",
                      sent["acked"]?.intValue == Int64(count) && sent["errors"]?.intValue == 0 && seen["field"]?.intValue == Int64(count))
        Output.error("bench:   \(Int(cost.ackedPerSecond).grouped) actions/s, \(stateBytes.grouped)-byte state, \(published.grouped) snapshots (\(String(format: "%.2f", cost.snapshotsPerThousandActions)) per 1,000 actions)")
    }
}
