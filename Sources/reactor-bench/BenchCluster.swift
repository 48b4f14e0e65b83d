import Foundation
import MessagePack
import ReactorBus
import TestSupport

/// The processes of one reactor phase: an authority (the real `reactor-node authority`, or a
/// baseline: Python's, or the libzmq + msgpack-c one), its workers, and the bench's observer and
/// client peers.
///
/// Everything binds ephemeral ports on 127.0.0.1. ``run(_:)`` always stops and reaps every
/// child, whether the phase succeeds, fails or times out: clients and observers first, then
/// workers, then the authority (SIGTERM, SIGKILL after a grace period).
final class BenchCluster {
    /// The authority's endpoints, as it printed them.
    struct Endpoints {
        var actions: String
        var workers: String?
        var feed: String
    }

    let app: String
    let authority: ChildProcess
    let endpoints: Endpoints
    private(set) var others: [ChildProcess] = []

    private init(app: String, authority: ChildProcess, endpoints: Endpoints) {
        self.app = app
        self.authority = authority
        self.endpoints = endpoints
    }

    /// Starts `reactor-node authority --app APP` on ephemeral loopback ports.
    static func authority(app: String, extra: [String] = [], name: String = "authority") async throws -> BenchCluster {
        let process = try ChildProcess.reactorNode(
            ["authority", "--app", app, "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*",
             "--log-level", "warning", "--max-in-flight", "10000000"] + extra, name: name)
        return try await started(app: app, process: process)
    }

    /// Starts another program that prints its endpoints like the authority does.
    static func external(app: String, executable: String, arguments: [String], name: String) async throws -> BenchCluster {
        try await started(app: app, process: try ChildProcess.spawn(executable: executable, arguments: arguments, name: name))
    }

    private static func started(app: String, process: ChildProcess) async throws -> BenchCluster {
        guard let line = await process.waitForJSON(timeout: .seconds(20), where: { $0["actions"] != nil }),
              let actions = line["actions"]?.stringValue, let feed = line["feed"]?.stringValue else {
            await process.stop()
            throw BenchError.phase("\(process.name) printed no endpoints\n\(process.logTail())")
        }
        return BenchCluster(app: app, authority: process, endpoints: Endpoints(actions: actions, workers: line["workers"]?.stringValue, feed: feed))
    }

    /// Runs `body` with this cluster, then stops everything, also when `body` throws.
    func run<T>(_ body: (BenchCluster) async throws -> T) async throws -> T {
        let result: Result<T, any Error>
        do {
            result = .success(try await body(self))
        } catch {
            result = .failure(error)
        }
        await stop()
        return try result.get()
    }

    /// Starts `count` real `reactor-node worker` processes.
    func addWorkers(_ count: Int, concurrency: Int, extra: [String] = []) throws {
        try addWorkers(count) { workers, index in
            try ChildProcess.reactorNode(
                ["worker", "--app", app, "--authority", workers, "--concurrency", String(concurrency), "--log-level", "warning",
                 "--name", "bench-worker-\(index)"] + extra, name: "worker-\(index)")
        }
    }

    /// Starts `count` baseline workers (`reactor-bench peer pipeline-worker`, ``PipelineBaselineWorker``)
    /// for the baseline authority.
    func addBaselineWorkers(_ count: Int, capacity: Int) throws {
        try addWorkers(count) { workers, index in
            try ChildProcess.peer(["pipeline-worker", "--endpoint", workers, "--capacity", String(capacity)], name: "worker-\(index)")
        }
    }

    /// Starts `count` workers made by `start(workersEndpoint, index)`, each named `worker-N` (so
    /// ``stop()`` stops them after the clients and before the authority, and their CPU is read).
    private func addWorkers(_ count: Int, _ start: (String, Int) throws -> ChildProcess) throws {
        guard let workers = endpoints.workers else { throw BenchError.phase("\(authority.name) has no workers endpoint") }
        for index in 1...max(count, 1) { others.append(try start(workers, index)) }
    }

    /// Starts an observer peer and waits until it holds its first snapshot.
    func observer(field: String, untilVersion: Int, record: Bool = false, timeout: Duration) async throws -> ChildProcess {
        var arguments = ["observe", "--app", app, "--feed", endpoints.feed, "--endpoint", endpoints.actions,
                         "--field", field, "--until-version", String(untilVersion), "--timeout", String(Double(timeout.wholeMilliseconds) / 1_000)]
        if record { arguments.append("--record") }
        let observer = try ChildProcess.peer(arguments, name: "observer")
        others.append(observer)
        guard await observer.waitForEvent("ready", timeout: .seconds(20)) != nil else {
            throw BenchError.phase("the observer never received a snapshot\n\(observer.logTail())\n\(authority.logTail())")
        }
        return observer
    }

    /// Starts a client peer.
    func client(workload: String, count: Int, window: Int, extra: [String] = []) throws -> ChildProcess {
        let client = try ChildProcess.peer(["client", "--endpoint", endpoints.actions, "--workload", workload, "--count", String(count), "--window", String(window)] + extra,
            name: "client")
        others.append(client)
        return client
    }

    /// Starts another `reactor-node` command against this cluster (stopped with the clients).
    func node(_ arguments: [String], name: String) throws -> ChildProcess {
        let node = try ChildProcess.reactorNode(arguments, name: name)
        others.append(node)
        return node
    }

    /// Starts another `peer` role (stopped with the clients).
    func peer(_ arguments: [String], name: String) throws -> ChildProcess {
        let peer = try ChildProcess.peer(arguments, name: name)
        others.append(peer)
        return peer
    }

    /// The `result` event of a peer, or an error naming the peer with the tails of the logs.
    func result(of peer: ChildProcess, timeout: Duration) async throws -> MessagePackValue {
        if let result = await peer.waitForEvent("result", timeout: timeout) { return result }
        let failure = peer.events("failed").first?["error"]?.stringValue
        let why = failure ?? (peer.isRunning ? "no result within \(timeout)" : "ended without a result")
        throw BenchError.phase("\(peer.name): \(why)\n\(peer.logTail())\n\(authority.logTail())")
    }

    /// Stops every process of the cluster and reaps it.
    func stop() async {
        for child in others.reversed() where !child.name.hasPrefix("worker") { await child.stop(grace: .seconds(3)) }
        for child in others where child.name.hasPrefix("worker") { child.signal(SIGTERM) }
        for child in others where child.name.hasPrefix("worker") { await child.stop(grace: .seconds(6)) }
        await authority.stop(grace: .seconds(10))
    }
}
