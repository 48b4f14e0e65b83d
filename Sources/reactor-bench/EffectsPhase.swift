import ReactorBus

/// The effects phase: effects that wait 10 ms, as a network call would (`worker --effect-delay
/// 0.01`), through 1, 2 and 4 workers with 100, 1,000 and 10,000 of them in flight in all
/// (`--quick`: 100 and 1,000). The client pipelines `countUpAsync` (each action one effect); its
/// acks come at once, so the effects in flight are what the workers run: `workers ×
/// concurrency` (each also holds its default prefetch waiting, which the authority's
/// `--max-worker-capacity` is raised to allow; the jobs waiting do not count in the ideal). The ideal is that many every 10 ms; the figure is applied/s (until the observer
/// holds the final count) against it. Where the ratio falls, CPU has become the limit (the
/// report gives the authority's and the workers' CPU per action).
/// Check: every run's observer ends at its count exactly.
enum EffectsPhase {
    /// How long each effect waits.
    static let delaySeconds = 0.010

    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        for workers in [1, 2, 4] {
            for inFlight in plan.effectsInFlight {
                let concurrency = max(inFlight / workers, 1)
                let ideal = Double(workers * concurrency) / delaySeconds
                // About two seconds of the ideal rate, within the plan's bounds.
                let count = min(max(Int(ideal * 2), 1_000), plan.effectsMaxActions)
                Output.error("bench: effects — \(count.grouped) countUpAsync, each effect 10 ms, \(workers) worker(s) × \(concurrency) (ideal \(Int(ideal).grouped)/s)")
                let held = WorkerConfiguration(authorityEndpoint: "", appName: "", concurrency: concurrency).capacity
                let cluster = try await BenchCluster.authority(app: "counter", extra: ["--max-worker-capacity", String(max(held, 256))],
                                                               name: "authority-effects-\(workers)-\(inFlight)")
                let pipeline = try await cluster.run { cluster in
                    try cluster.addWorkers(workers, concurrency: concurrency, extra: ["--effect-delay", String(delaySeconds)])
                    return try await PipelinePhase.measure(cluster, workload: "countUpAsync", field: "count", count: count, workers: workers,
                                                           window: plan.window, minimumRate: 500)
                }
                let run = BenchResults.EffectsRun(workers: workers, concurrency: concurrency, pipeline: pipeline, ideal: ideal)
                results.effects.append(run)
                results.check("effects_\(workers)x\(concurrency)_count", "effects \(workers) × \(concurrency): observer's final count equals the actions sent",
                              pipeline.isExact)
                Output.error("bench:   \(Int(pipeline.appliedPerSecond).grouped) applied/s, \(String(format: "%.2f", run.ratio))x the ideal")
            }
        }
    }
}
