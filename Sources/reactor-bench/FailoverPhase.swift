import Foundation
import MessagePack
import ReactorApps
import ReactorBus
import ReactorLog
import Synchronization
import TestSupport
import ZeroMQ

/// Phase 11: high availability. Each round starts an etcd (Debian's `etcd-server`, on loopback)
/// and three `reactor-node authority --election` candidates under `sync` replication; a client
/// given all three (moving to the next after 250 ms without a connection, at once when one
/// refuses) sends one `countUp` at a time; after 200 acks and a random part of the lease (a
/// crash falls anywhere in the primary's renewal cycle) the primary is SIGKILLed; the figure is
/// the time from the kill to the first acknowledgement of an action sent after the kill (so from
/// the new primary). The rounds run with a 2 s lease (the target's), then again with a 1 s one. Then, in the same
/// run, the acked/s of one pipelining client against a primary with no replication, with one
/// `async` standby and with one `sync` standby. Skipped without /usr/bin/etcd.
/// Checks: every round's count equals the acks, exactly.
enum FailoverPhase {
    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        guard FileManager.default.isExecutableFile(atPath: EtcdServer.executable) else {
            results.failover = .skipped("no \(EtcdServer.executable) (Debian's etcd-server)")
            return
        }
        var outcome = BenchResults.Failover(lease: 2, seconds: [])
        let rounds = plan.failoverRounds
        for lease in [2, 1] {
            for round in 1...rounds {
                Output.error("bench: failover — round \(round)/\(rounds): 3 elected authorities (sync, \(lease) s lease), the primary SIGKILLed")
                let (seconds, exact) = try await failoverRound(round: round, lease: lease)
                if lease == 2 { outcome.seconds.append(seconds) } else { outcome.shortLeaseSeconds.append(seconds) }
                let key = lease == 2 ? "failover_\(round)_exact" : "failover_1s_lease_\(round)_exact"
                results.check(key, "failover round \(round), \(lease) s lease: the count equals the actions acked", exact)
                Output.error("bench:   the new primary acked \(String(format: "%.2f", seconds)) s after the kill")
            }
        }
        let count = plan.replicationActions
        for mode in ["none", "async", "sync"] {
            Output.error("bench: failover — \(count.grouped) countUp, replication \(mode)")
            let (rate, cpu) = try await throughput(mode: mode, count: count, window: plan.window)
            switch mode {
            case "none": outcome.unreplicatedPerSecond = rate
            case "async": outcome.asyncPerSecond = rate
            default: outcome.syncPerSecond = rate
            }
            outcome.cpu[mode] = cpu
            Output.error("bench:   \(Int(rate).grouped) acked/s; CPU per action: primary \(cpu.primary.map { String(format: "%.2f", $0) } ?? "-") µs, "
                         + "standby \(cpu.standby.map { String(format: "%.2f", $0) } ?? "-") µs, client \(cpu.client.map { String(format: "%.2f", $0) } ?? "-") µs")
        }
        results.failover = .measured(outcome)
    }

    /// One candidate's endpoints in the run directory.
    private static func endpoints(_ name: String) -> (actions: String, workers: String, feed: String, replication: String) {
        let stem = "ipc://" + BenchPaths.temporaryFile("ha-\(name)")
        return (stem + "-a", stem + "-w", stem + "-f", stem + "-r")
    }

    /// Kills the primary of three candidates under a one-at-a-time client; returns the seconds
    /// from the kill to the first ack after it, and whether the final count equals the acks.
    private static func failoverRound(round: Int, lease: Int) async throws -> (Double, Bool) {
        let etcd = try await EtcdServer.start(name: "etcd-\(lease)-\(round)")
        var nodes: [ChildProcess] = []
        defer {
            for node in nodes { node.signal(SIGKILL) }
            for node in nodes { _ = node.reap() }
        }
        func candidate(_ name: String) throws -> ChildProcess {
            let own = endpoints("\(lease)-\(round)\(name)")
            let node = try ChildProcess.reactorNode([
                "authority", "--app", "counter", "--data", BenchPaths.temporaryFile("ha-\(lease)-\(round)\(name)-data"), "--log-level", "warning",
                "--actions", own.actions, "--workers", own.workers, "--feed", own.feed, "--replication", own.replication,
                "--replication-mode", "sync", "--election", etcd.clientURL, "--election-ttl", String(lease), "--name", name,
            ], name: "candidate-\(name)")
            nodes.append(node)
            return node
        }
        let primary = try candidate("a")
        guard await primary.waitForJSON(timeout: .seconds(30), where: { $0["actions"] != nil }) != nil else {
            await etcd.stop()
            throw BenchError.phase("the first candidate never served\n\(primary.logTail())")
        }
        let standbys = [try candidate("b"), try candidate("c")]
        for standby in standbys where await standby.waitForJSON(timeout: .seconds(30), where: { $0["standby_of"] != nil }) == nil {
            await etcd.stop()
            throw BenchError.phase("\(standby.name) never followed\n\(standby.logTail())")
        }
        let context = try ZMQContext()
        var configuration = ActionClientConfiguration(actionsEndpoint: ["a", "b", "c"].map { endpoints("\(lease)-\(round)\($0)").actions }.joined(separator: ","),
                                                      timeout: .milliseconds(500), retries: 1_000, window: 1)
        configuration.connectTimeout = .seconds(60)
        // A connection to a dead or not yet promoted authority fails at once on loopback: the
        // client tries the next after 250 ms instead of the default second.
        configuration.failoverAfter = .milliseconds(250)
        let client = try ActionClient<Counter>(configuration: configuration, logger: Logger(label: "bench-client", sink: .discard), context: context)
        try client.start()
        // Each ack with when its action was sent: an ack that arrives after the kill for an
        // action sent before it may still be the old primary's.
        let acks = Mutex<[(sent: ContinuousClock.Instant, acked: ContinuousClock.Instant)]>([])
        let load = Task {
            while !Task.isCancelled {
                let sent = ContinuousClock.now
                guard (try? await client.send(.countUp)) != nil else { return }
                acks.withLock { $0.append((sent, .now)) }
            }
        }
        var killedAt = ContinuousClock.now
        let warm = ContinuousClock.now + .seconds(30)
        while acks.withLock({ $0.count }) < 200, ContinuousClock.now < warm { try await Task.sleep(for: .milliseconds(5)) }
        // A crash does not wait for a good moment: the kill falls at a random point of the
        // primary's renewal cycle (a kill right after the grant would always find the longest
        // lease left, a kill just before a renewal the shortest).
        try await Task.sleep(for: .milliseconds(Int.random(in: 0..<(lease * 1_000))))
        primary.signal(SIGKILL)
        killedAt = .now
        var firstAfter: ContinuousClock.Instant?
        let deadline = killedAt + .seconds(60)
        while firstAfter == nil, ContinuousClock.now < deadline {
            firstAfter = acks.withLock { $0.last.flatMap { $0.sent > killedAt ? $0.acked : nil } }
            if firstAfter == nil { try await Task.sleep(for: .milliseconds(2)) }
        }
        // A few more acks after the first, then stop and count.
        try await Task.sleep(for: .milliseconds(200))
        load.cancel()
        await load.value
        let acked = acks.withLock { $0.count }
        let state = try? await client.snapshot()
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
        await etcd.stop()
        guard let firstAfter else { throw BenchError.phase("no ack within 60 s of the kill\n\(standbys.map { $0.logTail() }.joined(separator: "\n"))") }
        let seconds = Double((firstAfter - killedAt).components.attoseconds) / 1e18 + Double((firstAfter - killedAt).components.seconds)
        return (seconds, state.map { $0.state.count == acked } ?? false)
    }

    /// Acked/s of one pipelining client against a primary with the given replication, and the
    /// CPU each role spent per action meanwhile.
    private static func throughput(mode: String, count: Int, window: Int) async throws -> (Double, BenchResults.ReplicationCPU) {
        let data = BenchPaths.temporaryFile("ha-throughput-\(mode)")
        let replication = "ipc://" + BenchPaths.temporaryFile("ha-throughput-\(mode)-r")
        let extra = mode == "none" ? ["--data", data] : ["--data", data, "--replication", replication, "--replication-mode", mode]
        let cluster = try await BenchCluster.authority(app: "counter", extra: extra, name: "primary-\(mode)")
        return try await cluster.run { cluster in
            var standbyPID: pid_t?
            if mode != "none" {
                let standby = try cluster.node(["authority", "--app", "counter", "--data", data + "-standby", "--standby", replication,
                                                "--log-level", "warning", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*",
                                                "--feed", "tcp://127.0.0.1:*"], name: "standby-\(mode)")
                guard await standby.waitForJSON(timeout: .seconds(30), where: { $0["standby_of"] != nil }) != nil else {
                    throw BenchError.phase("the standby never followed\n\(standby.logTail())")
                }
                standbyPID = standby.pid
            }
            let primaryBefore = ProcessCPU.seconds(of: cluster.authority.pid), standbyBefore = standbyPID.flatMap(ProcessCPU.seconds(of:))
            let client = try cluster.client(workload: "countUp", count: count, window: window, extra: ["--verify-field", "count"])
            let sent = try await cluster.result(of: client, timeout: BenchPlan.limit(count, minimumRate: 2_000, base: 60))
            let cpu = BenchResults.ReplicationCPU(
                primary: ProcessCPU.microsecondsPer(count, from: primaryBefore, to: ProcessCPU.seconds(of: cluster.authority.pid)),
                standby: ProcessCPU.microsecondsPer(count, from: standbyBefore, to: standbyPID.flatMap(ProcessCPU.seconds(of:))),
                client: sent["cpu_seconds"]?.doubleValue.map { $0 / Double(count) * 1e6 })
            return (sent["per_second"]?.doubleValue ?? 0, cpu)
        }
    }
}
