import Foundation
import ReactorBus
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// `reactor-node send` against an overloaded, absent and restarted authority: it slows down
/// instead of failing, gives up within its connect timeout, and resends what a crash swallowed.
@Suite(.spawnsProcesses) struct ClientBackpressureTests {
    static let mixed = [#"{"countUp":{}}"#, #"{"countUpAsync":{}}"#]

    @Test func anOverloadedAuthoritySlowsSendDownWithoutFailingAnAction() async throws {
        // At most 20 actions with unfinished effects: with 64 in flight, busy is certain.
        let cluster = try await ClusterProcesses(extra: ["--max-in-flight", "20"])
        try cluster.addWorker()
        try await cluster.waitForWorkers(1)
        let sent = try await cluster.send(Self.mixed, repeat: 10_000, concurrency: 64)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        #expect(sent.summary?.contains(#""sent":20000,"acked":20000,"failed":0,"#) == true, "\(sent.summary ?? "")")
        let stats = try await waitForQuiet(cluster.endpoints.actions)
        #expect(stats["version"] == 20_000)
        #expect(stats["action_seq"] == 20_000, "every action accepted once")
        #expect(stats["actions_accepted"] == 20_000)
        #expect(stats["actions_busy"] ?? 0 > 0, "the test must overload the authority: \(stats)")
        await cluster.stop()
    }

    @Test func sendToAnEndpointNobodyListensOnGivesUpWithinItsConnectTimeout() async throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context: context, type: .router)
        try socket.set(.linger, 0)
        try socket.bind("tcp://127.0.0.1:*")
        let endpoint = try socket.get(.lastEndpoint)
        socket.close()
        #expect(context.terminate(timeout: .seconds(5)))

        let started = ContinuousClock.now
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoint, "--connect-timeout", "2", "--repeat", "5000"] + Self.mixed, name: "send")
        let status = await send.waitForExit(timeout: .seconds(30))
        let elapsed = ContinuousClock.now - started
        #expect(status == 69, "\(send.diagnostics)")
        #expect(elapsed >= .seconds(2), "gave up after \(elapsed)")
        // Timed by `send` itself: the test's own clock also counts how long a loaded machine
        // took to start the process and to let this task see that it ended.
        let own = send.output.last.flatMap { $0.firstMatch(of: /"seconds":([0-9.]+)/).flatMap { Double($0.1) } }
        #expect(own.map { $0 >= 2 && $0 < 2 + 6 } == true, "send gave up after \(own.map { "\($0) s" } ?? "?") by its own clock")
        #expect(send.diagnostics.contains("the authority at \(endpoint) could not be reached for 2 s"))
        #expect(send.diagnostics.contains("--connect-timeout"))
        #expect(send.output.last?.contains(#""acked":0,"#) == true)
    }

    @Test func killingTheAuthorityMidSendLosesNothingAndAppliesNothingTwice() async throws {
        let directory = NSTemporaryDirectory() + "reactorbus-restart-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func authority(_ endpoints: (actions: String, workers: String, feed: String)?) throws -> ChildProcess {
            try ChildProcess.node(["authority", "--app", "counter", "--data", directory, "--heartbeat", "0.5",
                                   "--actions", endpoints?.actions ?? "tcp://127.0.0.1:*", "--workers", endpoints?.workers ?? "tcp://127.0.0.1:*",
                                   "--feed", endpoints?.feed ?? "tcp://127.0.0.1:*"], name: "authority")
        }
        var node = try authority(nil)
        let endpoints = try await node.endpoints()
        let worker = try ChildProcess.node(["worker", "--app", "counter", "--authority", endpoints.workers, "--heartbeat", "0.5", "--concurrency", "16"], name: "worker")
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "30000",
                                          "--connect-timeout", "60"] + Self.mixed, name: "send")
        // Kill once some, not all, of the 60,000 actions are in: early, and with plenty left, so
        // that a test run that keeps this task waiting does not see send finish first.
        _ = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(60)) { $0["action_seq"] ?? 0 >= 2_000 || !send.isRunning }
        #expect(send.isRunning, "send finished before the kill: \(send.diagnostics)")
        node.signal(SIGKILL)
        #expect(await node.waitForExit() != 0)
        node = try authority(endpoints)
        _ = try await node.endpoints()
        #expect(await send.waitForExit(timeout: .seconds(120)) == 0, "\(send.diagnostics)\(node.diagnostics)")
        #expect(send.output.last?.contains(#""sent":60000,"acked":60000,"failed":0,"#) == true, "\(send.output.last ?? "")")
        #expect(send.diagnostics.contains("reconnected to \(endpoints.actions)"), "\(send.diagnostics)")
        let stats = try await waitForQuiet(endpoints.actions)
        #expect(stats["version"] == 60_000, "\(node.diagnostics)")
        #expect(stats["action_seq"] == 60_000, "no action applied twice")
        #expect(stats["open_jobs"] == 0)
        worker.signal(SIGTERM)
        await worker.waitForExit()
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    /// The authority's counters once every effect is done (no open jobs, and every counter action
    /// has added its one to the version), or the last ones read when `timeout` passes.
    func waitForQuiet(_ actions: String, timeout: Duration = .seconds(60)) async throws -> [String: UInt64] {
        try await WireProbe(actions: actions).stats(within: timeout) { $0["open_jobs"] == 0 && $0["version"] == $0["action_seq"] }
    }
}
