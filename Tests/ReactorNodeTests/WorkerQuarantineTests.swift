import Foundation
@testable import ReactorBus
import Testing
import TestSupport
import TestTraits

/// A greedy worker (announces capacity 1,000,000, never finishes a job) next to a real healthy
/// worker, against the real authority binary: the app is not starved.
@Suite(.spawnsProcesses) struct WorkerQuarantineTests {
    @Test func aGreedyWorkerIsClampedAndQuarantinedAndEveryEffectIsAppliedOnTheHealthyWorker() async throws {
        let cap: UInt64 = 16
        let actions = 1_000
        let cluster = try await ClusterProcesses(extra: ["--job-timeout", "0.5", "--max-worker-capacity", String(cap), "--quarantine-after", "3",
                                                         "--log-level", "warning"])
        let greedy = GreedyWorker(endpoint: cluster.endpoints.workers, app: "counter")
        defer { greedy.stop() }
        #expect(await greedy.waitForWelcome(), "\(greedy.failure ?? "")\(cluster.authority.diagnostics)")
        let healthy = try cluster.addWorker(["--name", "healthy", "--effect-delay", "0.005"])
        try await cluster.waitForWorkers(2)

        let started = ContinuousClock.now
        let sent = try await cluster.send([#"{"countUpAsync":{}}"#], repeat: actions)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        var stats: [String: UInt64] = [:]
        let deadline = started + .seconds(30)
        while ContinuousClock.now < deadline {
            stats = try await cluster.stats()
            if stats["version"] == UInt64(actions), stats["open_jobs"] == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let elapsed = ContinuousClock.now - started
        let greedyJobs = UInt64(greedy.jobs.count)
        stats = try await cluster.stats()

        // Every effect applied, exactly once, by the healthy worker, in bounded time.
        #expect(stats["version"] == UInt64(actions), "after \(elapsed)\(healthy.diagnostics)\(cluster.authority.diagnostics)")
        #expect(stats["open_jobs"] == 0)
        #expect(stats["jobs_done"] == UInt64(actions))
        let snapshot = try await cluster.snapshot()
        #expect((snapshot["state"] as? [String: Any])?["count"] as? Int == actions)
        // The greedy worker was trusted with the cap, not what it announced, and then quarantined:
        // beyond its first `cap` jobs it only ever got one probation job per quarantine.
        #expect(stats["capacities_clamped"] == 1)
        #expect(stats["workers_quarantined"] ?? 0 >= 1)
        #expect(greedyJobs >= 1)
        #expect(greedyJobs <= cap + (stats["workers_quarantined"] ?? 0), "greedy got \(greedyJobs) jobs")
        #expect(stats["jobs_redispatched"] ?? 0 >= 1)
        let log = cluster.authority.diagnostics
        #expect(log.contains("WARN authority: worker greedy ("))
        #expect(log.contains("announced capacity 1000000: trusted with \(cap)"), "\(log)")
        #expect(log.contains(") quarantined: "), "\(log)")
        print("greedy worker: \(greedyJobs) job(s), \(stats["workers_quarantined"] ?? 0) quarantine(s); \(actions) effects applied in \(elapsed)")
        greedy.stop()
        await cluster.stop()
    }

    @Test func theTrustOptionsAreCheckedAtStart() async throws {
        for bad in [["--max-worker-capacity", "0"], ["--quarantine-after", "-1"], ["--max-worker-capacity", "many"]] {
            let authority = try ChildProcess.node(["authority", "--app", "counter", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*",
                                                   "--feed", "tcp://127.0.0.1:*"] + bad, name: "authority-bad-option")
            #expect(await authority.waitForExit() == 64, "\(bad)\(authority.diagnostics)")
        }
    }
}
