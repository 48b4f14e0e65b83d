/// The clients phase: 1, 10, 100 and 1,000 clients at once (`--quick`: up to 100), a connection
/// and a client identity each, sending `countUp` to one authority with 1,000 actions unacked in
/// all (so the work in flight stays the same and only the number of peers grows), while an
/// observer follows. Figures: aggregate acked/s and action -> ack p50/p99 at each count, and
/// the rate with the most clients against the rate with one (flat would be 1x), with the CPU
/// per action of the authority and of the clients' process (all of them in one, on the same
/// cores: as connections grow, each action costs it a send and a receive system call of its own).
///
/// Then the fewest and the most clients again against the libzmq + msgpack-c authority
/// (``PipelineBaselineAuthority``): how much of the fall with more connections is the
/// libraries' own, per connection, and how much the framework's.
/// Check: every action acked and the observer's final count equal to the actions sent.
enum ClientsPhase {
    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        for clients in plan.clientCounts {
            Output.error("bench: clients — \(plan.clientsActions.grouped) countUp from \(clients.grouped) client(s) at once, \(window(plan, clients).grouped) unacked each")
            let cluster = try await BenchCluster.authority(app: "counter", name: "authority-clients-\(clients)")
            results.clients.append(try await measure(cluster, clients: clients, plan: plan, results: &results,
                                                     check: ("clients_\(clients)", "clients \(clients)")))
        }
        guard let fewest = plan.clientCounts.first, let most = plan.clientCounts.last, most > fewest else { return }
        for clients in [fewest, most] {
            Output.error("bench: clients — the same from \(clients.grouped) client(s) to an authority written on libzmq and msgpack-c calls alone")
            let cluster = try await BenchCluster.external(
                app: "counter", executable: BenchPaths.benchBinary,
                arguments: ["peer", "pipeline-authority", "--actions", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"],
                name: "pipeline-authority-clients-\(clients)")
            results.clientsPipeline.append(try await measure(cluster, clients: clients, plan: plan, results: &results,
                                                             check: ("clients_pipeline_\(clients)", "clients \(clients), libzmq + msgpack-c authority")))
        }
    }

    /// Unacked actions per client: the plan's window shared by all.
    private static func window(_ plan: BenchPlan, _ clients: Int) -> Int { max(plan.window / clients, 1) }

    /// One run of the clients peer and an observer against `cluster`, which it stops; checks it
    /// as `check` (the JSON key's start and the name).
    private static func measure(_ cluster: BenchCluster, clients: Int, plan: BenchPlan, results: inout BenchResults,
                                check: (key: String, name: String)) async throws -> BenchResults.ClientsRun {
        let count = plan.clientsActions, window = window(plan, clients)
        let (sent, seen, authorityCPU) = try await cluster.run { cluster in
            let limit = BenchPlan.limit(count, minimumRate: 1_000)
            let observer = try await cluster.observer(field: "count", untilVersion: count, timeout: limit)
            let before = ProcessCPU.seconds(of: cluster.authority.pid)
            let peer = try cluster.peer(["clients", "--endpoint", cluster.endpoints.actions, "--connections", String(clients),
                                         "--window", String(window), "--count", String(count)], name: "clients")
            let sent = try await cluster.result(of: peer, timeout: limit)
            let authorityCPU = ProcessCPU.microsecondsPer(count, from: before, to: ProcessCPU.seconds(of: cluster.authority.pid))
            return (sent, try await cluster.result(of: observer, timeout: limit), authorityCPU)
        }
        let run = BenchResults.ClientsRun(clients: clients, window: window, acked: Int(sent["acked"]?.intValue ?? 0),
                                          ackedPerSecond: sent["per_second"]?.doubleValue ?? 0,
                                          latency: LatencyRecorder.Summary(json: sent["latency"]) ?? .init(),
                                          authorityCPUMicroseconds: authorityCPU,
                                          clientsCPUMicroseconds: sent["cpu_seconds"]?.doubleValue.map { $0 / Double(max(count, 1)) * 1e6 })
        results.check("\(check.key)_count", "\(check.name): every action acked and the observer's count exact",
                      run.acked == count && sent["errors"]?.intValue == 0 && seen["field"]?.intValue == Int64(count))
        Output.error("bench:   \(Int(run.ackedPerSecond).grouped) acked/s, ack p50 \(Int(run.latency.p50)) µs, p99 \(Int(run.latency.p99)) µs")
        return run
    }
}
