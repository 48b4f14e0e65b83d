import Foundation
import ReactorApps
import ReactorBus
import ReactorLog
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Subscriptions with real processes: the ticker app's feed (one `tick(n)` action per event,
/// `n` = the event index) keeps every tick exactly once and in order when its worker is
/// SIGKILLed, and comes back after the authority is SIGKILLed and restarted.
@Suite(.spawnsProcesses, .serialized) struct SubscriptionProcessTests {
    let directory = NSTemporaryDirectory() + "reactorbus-subscriptions-\(UUID().uuidString)"

    func authority(_ endpoints: (actions: String, workers: String, feed: String)? = nil, data: Bool = false) throws -> ChildProcess {
        try ChildProcess.node(["authority", "--app", "ticker", "--heartbeat", "0.3",
                               "--actions", endpoints?.actions ?? "tcp://127.0.0.1:*", "--workers", endpoints?.workers ?? "tcp://127.0.0.1:*",
                               "--feed", endpoints?.feed ?? "tcp://127.0.0.1:*"] + (data ? ["--data", directory] : []), name: "authority")
    }

    func worker(_ endpoint: String, name: String) throws -> ChildProcess {
        try ChildProcess.node(["worker", "--app", "ticker", "--authority", endpoint, "--heartbeat", "0.3", "--name", name], name: name)
    }

    func follow(_ symbol: String, ticks: Int, actions: String) async throws {
        let sent = try ChildProcess.node(["send", "--app", "ticker", "--actions", actions, #"{"follow":{"symbol":"\#(symbol)","ticks":\#(ticks)}}"#], name: "send")
        #expect(await sent.waitForExit(timeout: .seconds(30)) == 0, "\(sent.diagnostics)")
    }

    /// Polls `condition` until it holds or `timeout` passes.
    func eventually(within timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// The ticker's state, read over the actions socket.
    func state(_ actions: String) async throws -> Ticker.State {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let client = try ActionClient<Ticker>(configuration: ActionClientConfiguration(actionsEndpoint: actions, timeout: .seconds(2), retries: 3),
                                              logger: Logger(label: "probe", sink: .discard), context: context)
        try client.start()
        defer { client.close() }
        return try await client.snapshot().state
    }

    @Test func aSubscriptionSurvivesSIGKILLOfItsWorkerWithEveryTickAppliedOnce() async throws {
        let node = try authority()
        let endpoints = try await node.endpoints()
        let workers = ["first": try worker(endpoints.workers, name: "first"), "second": try worker(endpoints.workers, name: "second")]
        let both = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(30)) { $0["workers"] == 2 }
        #expect(both["workers"] == 2, "\(node.diagnostics)")
        try await follow("ACME", ticks: 300, actions: endpoints.actions)
        let running = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(30)) { $0["version"] ?? 0 >= 25 }
        #expect(running["subscriptions_running"] == 1)
        #expect(running["subscriptions_assigned"] == 1)
        // Kill the worker that runs the feed, mid-run (300 ticks take 6 s).
        let owner = try #require(workers.keys.first { node.diagnostics.contains("subscription quotes/ACME (run 1, kind quotes) goes to worker \($0) (") },
                                 "\(node.diagnostics)")
        let other = owner == "first" ? "second" : "first"
        let killed = try #require(workers[owner])
        killed.signal(SIGKILL)
        #expect(await killed.waitForExit() != 0)
        let atKill = try await WireProbe(actions: endpoints.actions).stats()
        try #require(atKill["subscriptions_running"] == 1, "the feed ended before its worker was killed: \(atKill)")

        let done = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(60)) { $0["subscriptions_running"] == 0 && $0["version"] ?? 0 >= 301 }
        #expect(done["version"] == 301, "\(node.diagnostics)")
        #expect(done["subscriptions_running"] == 0)
        #expect(done["subscription_restarts"] == 1)
        #expect(done["subscriptions_assigned"] == 2)
        #expect(done["subscription_events_applied"] == 300)
        let state = try await state(endpoints.actions)
        #expect(state.ticks == ["ACME": Array(0..<300)])
        #expect(node.diagnostics.contains("subscription quotes/ACME (run 1, kind quotes) moves to worker \(other) ("), "\(node.diagnostics)")

        let survivor = try #require(workers[other])
        // It resumed after the last applied tick, and the authority stopped it with the last one.
        #expect(survivor.diagnostics.contains("subscription quotes/ACME (run 1, kind quotes): started after event "), "\(survivor.diagnostics)")
        #expect(await eventually { survivor.diagnostics.contains("subscription run 1: stopped") }, "\(survivor.diagnostics)")
        survivor.signal(SIGTERM)
        #expect(await survivor.waitForExit() == 0)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func anAuthorityRestartBringsTheSubscriptionsBackResumingAfterTheLastAppliedEvent() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var node = try authority(data: true)
        let endpoints = try await node.endpoints()
        let feeder = try worker(endpoints.workers, name: "feeder")
        try await follow("ACME", ticks: 300, actions: endpoints.actions)
        try await follow("BETA", ticks: 200, actions: endpoints.actions)
        let before = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(30)) { $0["version"] ?? 0 >= 40 }
        #expect(before["version"] ?? 0 >= 40, "\(node.diagnostics)")
        // Killed mid-run: 300 ticks take 6 s.
        try #require(before["subscriptions_running"] == 2, "\(before)")
        node.signal(SIGKILL)
        #expect(await node.waitForExit() != 0)

        node = try authority(endpoints, data: true)
        _ = try await node.endpoints()
        #expect(node.diagnostics.contains("recovered version"), "\(node.diagnostics)")
        let done = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(60)) { $0["subscriptions_running"] == 0 && $0["version"] ?? 0 >= 502 }
        #expect(done["version"] == 502, "\(node.diagnostics)")
        #expect(done["subscriptions_running"] == 0)
        let state = try await state(endpoints.actions)
        #expect(state.ticks == ["ACME": Array(0..<300), "BETA": Array(0..<200)])
        // Both runs survived the restart as the same runs, resuming where the journal left them.
        #expect(node.diagnostics.contains("subscription quotes/ACME (run 1, kind quotes) goes to worker feeder ("), "\(node.diagnostics)")
        #expect(node.diagnostics.contains("subscription quotes/BETA (run 2, kind quotes) goes to worker feeder ("), "\(node.diagnostics)")
        #expect(!node.diagnostics.contains("from the start"), "\(node.diagnostics)")

        // The journal holds each applied tick once, as a subscription_event record.
        let dump = try ChildProcess.node(["journal", "dump", "--app", "ticker", "--data", directory, "--json"], name: "dump")
        #expect(await dump.waitForExit(timeout: .seconds(30)) == 0, "\(dump.diagnostics)")
        let lines = dump.output
        #expect(lines.count { $0.contains(#""record":"subscription_event""#) } == 500, "\(lines.suffix(3))")
        #expect(lines.contains { $0.contains(#""record":"subscription_event","run":2,"index":199,"#) })

        feeder.signal(SIGTERM)
        #expect(await feeder.waitForExit() == 0)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }
}
