/// Phases 2 and 3: a client pipelining counter actions (a window of unacked ones) to the real
/// `reactor-node authority`, with an observer following the feed until the final version.
///
/// - **sync**: `countUp`, applied at once by the authority;
/// - **async**: `countUpAsync`, each one an effect run by one of the real `reactor-node worker`
///   processes and applied when its mutation comes back;
/// - **pipeline**: both against the limit baselines, an authority and workers written on libzmq
///   and msgpack-c calls alone (``PipelineBaselineAuthority``, ``PipelineBaselineWorker``).
///
/// Two figures: acks per second as the client sees them, and actions per second until the
/// observer holds the final state (for async, that is when the workers' results are applied).
/// The check: the observer's final `count` equals the actions sent, with no action refused.
enum PipelinePhase {
    static func sync(plan: BenchPlan, results: inout BenchResults) async throws {
        Output.error("bench: sync — \(plan.syncActions.grouped) countUp actions, \(plan.window.grouped) unacked in flight, one observer")
        let pipeline = try await run(app: "counter", workload: "countUp", field: "count", count: plan.syncActions, workers: 0, plan: plan,
                                     minimumRate: 5_000)
        results.sync = pipeline
        results.check("sync_count", "sync: observer's final count equals the actions sent", pipeline.isExact)
    }

    /// The sync and async pipelines (client, observer, window, counts, workers) against
    /// ``PipelineBaselineAuthority``: the counter's authority on libzmq and msgpack-c calls
    /// alone, and for `countUpAsync` its workers (``PipelineBaselineWorker``) on the same calls.
    static func limit(plan: BenchPlan, results: inout BenchResults) async throws {
        Output.error("bench: pipeline — \(plan.syncActions.grouped) countUp actions to an authority written on libzmq and msgpack-c calls alone")
        let sync = try await baseline(workload: "countUp", count: plan.syncActions, workers: 0, plan: plan, minimumRate: 5_000)
        results.pipelineBaseline = sync
        results.check("pipeline_count", "pipeline baseline: observer's final count equals the actions sent", sync.isExact)
        Output.error("bench: pipeline — \(plan.asyncActions.grouped) countUpAsync actions through \(plan.workers) workers on the same calls alone "
                     + "(\(plan.workerConcurrency) jobs each at once)")
        let async = try await baseline(workload: "countUpAsync", count: plan.asyncActions, workers: plan.workers, plan: plan, minimumRate: 2_000)
        results.pipelineAsyncBaseline = async
        results.check("pipeline_async_count", "async pipeline baseline: observer's final count equals the actions sent", async.isExact)
    }

    /// Runs one pipeline on a fresh baseline authority (with a workers endpoint and `workers`
    /// baseline workers when `workers > 0`).
    private static func baseline(workload: String, count: Int, workers: Int, plan: BenchPlan, minimumRate: Double) async throws -> BenchResults.Pipeline {
        var arguments = ["peer", "pipeline-authority", "--actions", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"]
        if workers > 0 { arguments += ["--workers", "tcp://127.0.0.1:*"] }
        let cluster = try await BenchCluster.external(app: "counter", executable: BenchPaths.benchBinary, arguments: arguments,
                                                      name: workers > 0 ? "pipeline-async-authority" : "pipeline-authority")
        return try await cluster.run { cluster in
            if workers > 0 { try cluster.addBaselineWorkers(workers, capacity: plan.workerConcurrency) }
            return try await measure(cluster, workload: workload, field: "count", count: count, workers: workers, window: plan.window, minimumRate: minimumRate)
        }
    }

    static func async(plan: BenchPlan, results: inout BenchResults) async throws {
        Output.error("bench: async — \(plan.asyncActions.grouped) countUpAsync actions through \(plan.workers) workers (\(plan.workerConcurrency) effects each at once)")
        let pipeline = try await run(app: "counter", workload: "countUpAsync", field: "count", count: plan.asyncActions, workers: plan.workers,
                                     plan: plan, minimumRate: 2_000)
        results.async = pipeline
        results.check("async_count", "async: observer's final count equals the actions sent", pipeline.isExact)
    }

    /// Runs one pipeline on a fresh authority (and workers) and collects its figures.
    static func run(app: String, workload: String, field: String, count: Int, workers: Int, plan: BenchPlan, minimumRate: Double,
                    authorityArguments: [String] = []) async throws -> BenchResults.Pipeline {
        let cluster = try await BenchCluster.authority(app: app, extra: authorityArguments)
        return try await cluster.run { cluster in
            if workers > 0 { try cluster.addWorkers(workers, concurrency: plan.workerConcurrency) }
            return try await measure(cluster, workload: workload, field: field, count: count, workers: workers, window: plan.window, minimumRate: minimumRate)
        }
    }

    /// Starts the observer, then the client, on a running cluster; waits for both results.
    static func measure(_ cluster: BenchCluster, workload: String, field: String, count: Int, workers: Int, window: Int,
                        minimumRate: Double) async throws -> BenchResults.Pipeline {
        let limit = BenchPlan.limit(count, minimumRate: minimumRate)
        let observer = try await cluster.observer(field: field, untilVersion: count, timeout: limit)
        let workerPIDs = cluster.others.filter { $0.name.hasPrefix("worker") }.map(\.pid)
        func workersCPU() -> Double? {
            let readings = workerPIDs.map(ProcessCPU.seconds(of:))
            return readings.contains(nil) ? nil : readings.reduce(0) { $0 + ($1 ?? 0) }
        }
        let authorityBefore = ProcessCPU.seconds(of: cluster.authority.pid), workersBefore = workersCPU()
        let client = try cluster.client(workload: workload, count: count, window: window, extra: ["--stats", "--wait-workers", String(workers)])
        let sent = try await cluster.result(of: client, timeout: limit)
        let seen = try await cluster.result(of: observer, timeout: limit)
        let authorityAfter = ProcessCPU.seconds(of: cluster.authority.pid), workersAfter = workersCPU()
        let started = sent["started_ns"]?.intValue ?? 0
        let reached = seen["reached_ns"]?.intValue ?? started
        let endToEnd = Double(max(reached - started, 1)) / 1e9
        let stats = sent["stats"]
        let pipeline = BenchResults.Pipeline(
            actions: count, acked: Int(sent["acked"]?.intValue ?? 0), errors: Int(sent["errors"]?.intValue ?? 0),
            ackedPerSecond: sent["per_second"]?.doubleValue ?? 0, appliedPerSecond: Double(count) / endToEnd,
            observerField: seen["field"]?.intValue, snapshotsPublished: Int(stats?["snapshots_published"]?.intValue ?? 0),
            measuredActionBytes: sent["action_bytes"]?.doubleValue ?? 0, measuredAckBytes: sent["ack_bytes"]?.doubleValue ?? 0,
            stats: stats, authorityCPUMicroseconds: ProcessCPU.microsecondsPer(count, from: authorityBefore, to: authorityAfter),
            workersCPUMicroseconds: workers > 0 ? ProcessCPU.microsecondsPer(count, from: workersBefore, to: workersAfter) : nil)
        if let error = sent["first_error"]?.stringValue {
            Output.error("bench:   \(pipeline.errors) action(s) refused; first: \(error)")
        }
        Output.error("bench:   \(Int(pipeline.ackedPerSecond).grouped) acked/s, \(Int(pipeline.appliedPerSecond).grouped) applied/s end to end, observer count \(pipeline.observerField.map(String.init) ?? "none")")
        return pipeline
    }
}

extension BenchResults.Pipeline {
    /// Every action acked, none refused, and the observer's final field equal to the count.
    var isExact: Bool { acked == actions && errors == 0 && observerField == Int64(actions) }
}
