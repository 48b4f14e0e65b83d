/// Phase 7: acked actions per second with a journal, under each `--fsync` policy.
///
/// Each policy gets a fresh authority with `--data` in the run's temporary directory and a
/// client pipelining `countUp`. `always` fsyncs before every ack, so it gets fewer actions and
/// a time cap; `batch` fsyncs once per poll batch; `none` leaves write-back to the OS. The
/// authority's `journal_commits` counter shows how many commits the actions took. Check: the
/// final count equals the actions acked.
enum DurabilityPhase {
    static let policies = ["always", "batch", "none"]

    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        for policy in policies {
            let count = policy == "always" ? plan.alwaysActions : plan.durableActions
            let cap = policy == "always" ? ["--max-seconds", String(plan.alwaysSeconds)] : []
            Output.error("bench: durability — --fsync \(policy), \(count.grouped) countUp actions\(cap.isEmpty ? "" : " (at most \(Int(plan.alwaysSeconds)) s)")")
            let directory = BenchPaths.temporaryFile("data-\(policy)")
            let cluster = try await BenchCluster.authority(app: "counter", extra: ["--data", directory, "--fsync", policy], name: "authority-\(policy)")
            let sent = try await cluster.run { cluster in
                let client = try cluster.client(workload: "countUp", count: count, window: plan.window, extra: ["--stats", "--verify-field", "count"] + cap)
                return try await cluster.result(of: client, timeout: BenchPlan.limit(count, minimumRate: 200, base: 30 + plan.alwaysSeconds))
            }
            let acked = Int(sent["acked"]?.intValue ?? 0)
            let outcome = BenchResults.Durability(
                policy: policy, actions: count, acked: acked, ackedPerSecond: sent["per_second"]?.doubleValue ?? 0,
                journalCommits: Int(sent["stats"]?["journal_commits"]?.intValue ?? 0), finalCount: sent["final_field"]?.intValue)
            results.durability.append(outcome)
            results.check("durability_\(policy)_count", "durability \(policy): final count equals the actions acked",
                          acked > 0 && sent["errors"]?.intValue == 0 && outcome.finalCount == Int64(acked))
            Output.error("bench:   \(Int(outcome.ackedPerSecond).grouped) acked/s, \(outcome.journalCommits.grouped) journal commits for \(acked.grouped) actions")
        }
    }
}
