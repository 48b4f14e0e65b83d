import Foundation
import Testing
import TestSupport

/// An authority process and its workers, started with ephemeral loopback ports.
final class ClusterProcesses {
    let authority: ChildProcess
    let endpoints: (actions: String, workers: String, feed: String)
    private(set) var workers: [ChildProcess] = []
    let app: String

    init(app: String = "counter", extra: [String] = []) async throws {
        self.app = app
        authority = try ChildProcess.node(["authority", "--app", app, "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*",
                                           "--feed", "tcp://127.0.0.1:*", "--heartbeat", "0.5"] + extra, name: "authority")
        endpoints = try await authority.endpoints()
    }

    /// Starts a worker process.
    @discardableResult
    func addWorker(_ extra: [String] = []) throws -> ChildProcess {
        let worker = try ChildProcess.node(["worker", "--app", app, "--authority", endpoints.workers, "--heartbeat", "0.5", "--concurrency", "8"] + extra,
                                     name: "worker-\(workers.count + 1)")
        workers.append(worker)
        return worker
    }

    /// Waits until the authority reports `count` registered workers.
    func waitForWorkers(_ count: UInt64, timeout: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let stats = try? await stats(), stats["workers"] ?? 0 >= count { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("fewer than \(count) workers registered in time\(authority.diagnostics)")
    }

    /// `reactor-node send` as a child process; returns its exit status.
    func send(_ actions: [String], repeat count: Int, concurrency: Int = 32, name: String = "send", extra: [String] = []) async throws -> (status: Int32?, summary: String?, process: ChildProcess) {
        let process = try ChildProcess.node(["send", "--app", app, "--actions", endpoints.actions, "--repeat", String(count), "--concurrency", String(concurrency)] + extra + actions, name: name)
        let status = await process.waitForExit(timeout: .seconds(120))
        return (status, process.output.last, process)
    }

    /// The current snapshot, from `observe --once --json`.
    func snapshot() async throws -> [String: Any] {
        let observe = try ChildProcess.node(["observe", "--app", app, "--feed", endpoints.feed, "--actions", endpoints.actions, "--once", "--json"], name: "observe-once")
        #expect(await observe.waitForExit() == 0, "\(observe.diagnostics)")
        let line = try #require(observe.output.first)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// The authority's counters, over the wire.
    func stats() async throws -> [String: UInt64] {
        try await WireProbe(actions: endpoints.actions).stats()
    }

    /// Stops everything: SIGTERM, then reaps (SIGKILL after the deadline).
    func stop() async {
        for worker in workers where worker.isRunning { worker.signal(SIGTERM) }
        for worker in workers { await worker.waitForExit(timeout: .seconds(10)) }
        authority.signal(SIGTERM)
        await authority.waitForExit(timeout: .seconds(10))
    }
}
