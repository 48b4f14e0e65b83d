import Foundation
import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Cancellation across processes, with the real `reactor-node` binary and the `search` app:
/// a cancelled job's late results never reach the state, its worker's task is cancelled, and
/// a restarted authority does not run it again.
@Suite(.spawnsProcesses, .serialized) struct CancellationProcessTests {
    /// A worker played by the test over a raw DEALER, so that it can send what a real worker
    /// never would: results after the cancel.
    final class ScriptedWorker {
        let dealer: RawDealer
        let writer = HeaderWriter()

        init(_ endpoint: String) throws {
            dealer = try RawDealer(endpoint)
        }

        var socket: ZMQSocket { dealer.socket }

        func send(_ message: WorkerMessage) throws { _ = try socket.trySend(message.frames(writer)) }

        /// The next message from the authority other than a heartbeat, within `timeout` ms.
        func receive(timeout: Int = 5_000) async throws -> AuthorityToWorker? {
            let deadline = ContinuousClock.now + .milliseconds(timeout)
            while let frames = try await socket.receiveMultipart(before: deadline) {
                let message = try AuthorityToWorker(frames: frames)
                guard case .heartbeat = message else { return message }
                try send(.heartbeat)
            }
            return nil
        }
    }

    private func client(_ actions: String, context: ZMQContext) throws -> ActionClient<Search> {
        let client = try ActionClient<Search>(configuration: ActionClientConfiguration(actionsEndpoint: actions, timeout: .seconds(2), retries: 20),
                                              logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        return client
    }

    /// The state once `condition` holds, or the last one read after `timeout`.
    private func state(of client: ActionClient<Search>, within timeout: Duration = .seconds(20),
                       until condition: (Search.State) -> Bool) async throws -> Snapshot<Search.State> {
        let deadline = ContinuousClock.now + timeout
        var snapshot = try await client.snapshot()
        while !condition(snapshot.state), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            snapshot = try await client.snapshot()
        }
        return snapshot
    }

    private func encoded(_ mutation: Search.Mutation) throws -> [UInt8] { try MessagePackEncoder().encode(mutation) }

    private func count(_ text: String, in process: ChildProcess) -> Int {
        process.diagnostics.components(separatedBy: text).count - 1
    }

    /// The value of the first sample of `name` whose labels contain `labels`, from a node's
    /// `--metrics` endpoint (the address in the first JSON line it printed).
    private func sample(_ name: String, labels: String = "", of node: ChildProcess) async throws -> String? {
        let line = try #require(await node.waitForLine { $0.contains("\"metrics\"") }, "no metrics address printed\(node.diagnostics)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        let port = try #require(object["metrics"]?.split(separator: ":").last.flatMap { UInt16($0) })
        let answer = try #require(RawHTTPClient.exchange(port: port, "GET /metrics HTTP/1.0\r\n\r\n"))
        let found = answer.body.split(separator: "\n").first { ($0.hasPrefix(name + "{") || $0.hasPrefix(name + " ")) && (labels.isEmpty || $0.contains(labels)) }
        return found?.split(separator: " ").last.map(String.init)
    }

    @Test func aRealWorkersCancelledSearchStopsAndOnlyItsEarlierResultsRemain() async throws {
        let cluster = try await ClusterProcesses(app: "search", extra: ["--metrics", "127.0.0.1:0"])
        let worker = try cluster.addWorker(["--metrics", "127.0.0.1:0"])
        try await cluster.waitForWorkers(1)
        let context = try ZMQContext()
        let client = try client(cluster.endpoints.actions, context: context)
        // The first search emits one result, then pauses a minute: the second one cancels it.
        _ = try await client.send(.search(query: "a", pauseMilliseconds: 60_000))
        var snapshot = try await state(of: client) { $0.results == ["a:1"] }
        #expect(snapshot.state.results == ["a:1"], "\(worker.diagnostics)")
        let ack = try await client.send(.search(query: "ab", pauseMilliseconds: 0))
        #expect(ack.actionSeq == 2)
        #expect(ack.version == 4, "the ack's version includes the cancel mutation")
        snapshot = try await state(of: client) { $0.finished == ["ab"] }
        #expect(snapshot.state == Search.State(query: "ab", results: ["a:1", "ab:1", "ab:2"], finished: ["ab"], cancelled: ["a"]))
        #expect(snapshot.version == 7)
        // The worker stopped the task it was running (not a minute later).
        let deadline = ContinuousClock.now + .seconds(10)
        while count("job 1.0: cancelled by the authority", in: worker) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(count("job 1.0: cancelled by the authority", in: worker) == 1, "\(worker.diagnostics)")
        let stats = try await WireProbe(actions: cluster.endpoints.actions).stats(within: .seconds(10)) { $0["open_jobs"] == 0 && $0["actions_applied"] == 2 }
        #expect(stats["jobs_cancelled"] == 1)
        #expect(stats["mutations_cancel"] == 1)
        #expect(stats["jobs_dispatched"] == 2)
        #expect(stats["jobs_done"] == 1)
        #expect(stats["jobs_failed"] == 0)
        #expect(stats["cancelled_results_dropped"] == 0, "a real worker sends nothing for a job once cancelled")
        #expect(stats["foreign_reports"] == 0)
        #expect(stats["actions_applied"] == 2)
        #expect(stats["open_jobs"] == 0)
        #expect(stats["version"] == 7)
        // The same counts on the metrics endpoints, the worker's included.
        #expect(try await sample("reactorbus_worker_jobs_cancelled_total", of: worker) == "1")
        #expect(try await sample("reactorbus_worker_jobs_done_total", of: worker) == "1")
        #expect(try await sample("reactorbus_jobs_cancelled_total", of: cluster.authority) == "1")
        #expect(try await sample("reactorbus_cancelled_results_dropped_total", of: cluster.authority) == "0")
        #expect(try await sample("reactorbus_mutations_applied_total", labels: "origin=\"cancelled\"", of: cluster.authority) == "1")
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
        await cluster.stop()
    }

    @Test func lateResultsOfACancelledJobAreDroppedAndCountedAndAQueuedOneIsNeverSent() async throws {
        // Heartbeats every 5 s: the scripted worker only answers them while it reads, and must
        // not be found dead while the test waits for the state.
        let cluster = try await ClusterProcesses(app: "search", extra: ["--heartbeat", "5"])
        let context = try ZMQContext()
        let client = try client(cluster.endpoints.actions, context: context)
        // No worker yet: the first search waits in the queue, and is cancelled there.
        _ = try await client.send(.search(query: "q", pauseMilliseconds: 0))
        var stats = try await cluster.stats()
        #expect(stats["queued_jobs"] == 1)
        _ = try await client.send(.cancel)
        stats = try await cluster.stats()
        #expect(stats["queued_jobs"] == 0)
        #expect(stats["open_jobs"] == 0)
        #expect(stats["jobs_cancelled"] == 1)

        let worker = try ScriptedWorker(cluster.endpoints.workers)
        try worker.send(.ready(name: "scripted", app: "search", capacity: 4, kinds: []))
        #expect(try await worker.receive() == .welcome(heartbeatMilliseconds: 5_000))
        _ = try await client.send(.search(query: "a", pauseMilliseconds: 0))
        // The first job it gets is action 3's: the cancelled one (1.0) is never sent.
        guard case .job(let job, "search", _)? = try await worker.receive() else {
            Issue.record("no job for the scripted worker\(cluster.authority.diagnostics)")
            return
        }
        #expect(job == JobID(actionSeq: 3, effectIndex: 0))
        try worker.send(.emit(job: job, emitIndex: 0, payload: try encoded(.hits(query: "a", results: ["a:1"]))))
        _ = try await state(of: client) { $0.results == ["a:1"] }
        _ = try await client.send(.cancel)
        #expect(try await worker.receive() == .cancel(job))
        // What it sends after the cancel is dropped, counted, never applied.
        try worker.send(.emit(job: job, emitIndex: 1, payload: try encoded(.hits(query: "a", results: ["a:2"]))))
        try worker.send(.emit(job: job, emitIndex: 2, payload: try encoded(.finished(query: "a"))))
        try worker.send(.done(job: job, emitCount: 3))
        stats = try await WireProbe(actions: cluster.endpoints.actions).stats(within: .seconds(10)) { $0["cancelled_results_dropped"] == 3 }
        #expect(stats["cancelled_results_dropped"] == 3)
        #expect(stats["jobs_cancelled"] == 2)
        #expect(stats["mutations_cancel"] == 2)
        #expect(stats["jobs_dispatched"] == 1)
        #expect(stats["jobs_done"] == 0)
        #expect(stats["foreign_reports"] == 0)
        #expect(stats["emits_duplicate"] == 0)
        #expect(stats["open_jobs"] == 0)
        #expect(stats["actions_applied"] == 4)
        let snapshot = try await client.snapshot()
        #expect(snapshot.state == Search.State(query: "a", results: ["a:1"], cancelled: ["q", "a"]))
        #expect(snapshot.version == 5)
        // Its slot was freed at the cancel: a new search goes to it at once.
        _ = try await client.send(.search(query: "b", pauseMilliseconds: 0))
        guard case .job(let next, _, _)? = try await worker.receive() else {
            Issue.record("no second job for the scripted worker")
            return
        }
        #expect(next == JobID(actionSeq: 5, effectIndex: 0))
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
        await cluster.stop()
    }

    @Test func aRestartedAuthorityDoesNotRunACancelledJobAgain() async throws {
        let directory = NSTemporaryDirectory() + "reactorbus-cancel-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func authority(_ endpoints: (actions: String, workers: String, feed: String)? = nil) throws -> ChildProcess {
            try ChildProcess.node(["authority", "--app", "search", "--data", directory, "--heartbeat", "0.5",
                                   "--actions", endpoints?.actions ?? "tcp://127.0.0.1:*", "--workers", endpoints?.workers ?? "tcp://127.0.0.1:*",
                                   "--feed", endpoints?.feed ?? "tcp://127.0.0.1:*"], name: "authority")
        }
        var node = try authority()
        let endpoints = try await node.endpoints()
        let worker = try ChildProcess.node(["worker", "--app", "search", "--authority", endpoints.workers, "--heartbeat", "0.5",
                                            "--log-level", "debug"], name: "worker")
        let context = try ZMQContext()
        let client = try client(endpoints.actions, context: context)
        _ = try await client.send(.search(query: "a", pauseMilliseconds: 60_000))
        let running = try await state(of: client) { $0.results == ["a:1"] }
        #expect(running.state.results == ["a:1"], "\(worker.diagnostics)")
        // Acked only once journaled: the cancel is durable when the kill comes.
        _ = try await client.send(.cancel)
        node.signal(SIGKILL)
        #expect(await node.waitForExit() != 0)
        node = try authority(endpoints)
        _ = try await node.endpoints()
        #expect(node.diagnostics.contains("0 open job(s)"), "\(node.diagnostics)")
        // The worker registers again; a new search runs and ends.
        _ = try await client.send(.search(query: "b", pauseMilliseconds: 0))
        let snapshot = try await state(of: client) { $0.finished == ["b"] }
        #expect(snapshot.state == Search.State(query: "b", results: ["a:1", "b:1", "b:2"], finished: ["b"], cancelled: ["a"]))
        #expect(snapshot.version == 7)
        let stats = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(10)) { $0["open_jobs"] == 0 }
        #expect(stats["jobs_dispatched"] == 1, "the restarted authority sent only the new search")
        #expect(stats["open_jobs"] == 0)
        #expect(stats["queued_jobs"] == 0)
        #expect(count("job 1.0: started", in: worker) == 1, "\(worker.diagnostics)")
        #expect(count("job 3.0: started", in: worker) == 1, "\(worker.diagnostics)")
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
        worker.signal(SIGTERM)
        await worker.waitForExit()
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }
}
