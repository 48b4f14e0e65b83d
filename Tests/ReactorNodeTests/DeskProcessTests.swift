import Foundation
import ReactorApps
import ReactorBus
import ReactorCore
import Testing
import TestSupport
import TestTraits

/// The `desk` app (a ticker and a search composed, with an initial action, an expanding action,
/// cancellation and subscriptions) with real processes: a worker of each part, an authority
/// SIGKILL and restart in the middle of a feed.
@Suite(.spawnsProcesses) struct DeskProcessTests {
    @Test func eachPartsWorkerRunsItsOwnFeedsAndLookups() async throws {
        let cluster = try await ClusterProcesses(app: "desk")
        let desk = try AppClient<Desk>(actions: cluster.endpoints.actions)
        let fresh = try await desk.state()
        #expect(fresh.version == 1)
        #expect(fresh.state.quotes.targets == ["ACME": 10])
        let quotesWorker = try cluster.addWorker(["--part", "quotes", "--name", "quotes-worker"])
        try cluster.addWorker(["--part", "lookup", "--name", "lookup-worker"])
        try await cluster.waitForWorkers(2)
        // A slow lookup, replaced by the next one (cancel in flight), then a watch of XYZ.
        _ = try await desk.send(.lookup(.search(query: "slow", pauseMilliseconds: 30_000)))
        _ = try await desk.state { $0.lookup.results == ["slow:1"] }
        _ = try await desk.send(.watch(symbol: "XYZ", ticks: 5, pauseMilliseconds: 0))
        let done = try await desk.state { $0.ticks == 15 && $0.lookup.finished == ["XYZ"] }
        #expect(done.state.quotes.ticks == ["ACME": Array(0..<10), "XYZ": Array(0..<5)], "\(cluster.authority.diagnostics)")
        #expect(done.state.board == ["ACME 10/10", "XYZ 5/5"])
        #expect(done.state.lookup == Search.State(query: "XYZ", results: ["slow:1", "XYZ:1", "XYZ:2"], finished: ["XYZ"], cancelled: ["slow"]))
        let stats = try await WireProbe(actions: cluster.endpoints.actions).stats(within: .seconds(10)) { $0["subscriptions_running"] == 0 && $0["open_jobs"] == 0 }
        #expect(stats["subscription_events_applied"] == 15)
        #expect(stats["jobs_cancelled"] == 1)
        #expect(stats["subscriptions_assigned"] == 2)
        // Both feeds went to the worker of the quotes part.
        let log = cluster.authority.diagnostics
        #expect(log.contains("subscription quotes.quotes/ACME (run 1, kind quotes.quotes) goes to worker quotes-worker ("), "\(log)")
        #expect(log.contains("subscription quotes.quotes/XYZ (run 2, kind quotes.quotes) goes to worker quotes-worker ("), "\(log)")
        _ = quotesWorker
        await desk.close()
        await cluster.stop()
    }

    @Test func aRestartedAuthorityResumesTheFeedAndDoesNotRunTheCancelledLookup() async throws {
        let directory = NSTemporaryDirectory() + "reactorbus-desk-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var cluster = try await ClusterProcesses(app: "desk", extra: ["--data", directory])
        var desk = try AppClient<Desk>(actions: cluster.endpoints.actions)
        try cluster.addWorker()
        try await cluster.waitForWorkers(1)
        _ = try await desk.send(.lookup(.search(query: "slow", pauseMilliseconds: 30_000)))
        _ = try await desk.state { $0.lookup.results == ["slow:1"] }
        _ = try await desk.send(.lookup(.cancel))
        _ = try await desk.send(.quotes(.follow(symbol: "LONG", ticks: 400)))
        let before = try await desk.state { ($0.quotes.ticks["LONG"]?.count ?? 0) >= 20 }
        #expect(before.state.lookup.cancelled == ["slow"])
        await desk.close()
        cluster.authority.signal(SIGKILL)
        #expect(await cluster.authority.waitForExit() != 0)
        await cluster.stop()

        cluster = try await ClusterProcesses(app: "desk", extra: ["--data", directory])
        desk = try AppClient<Desk>(actions: cluster.endpoints.actions)
        try cluster.addWorker()
        let after = try await desk.state(within: .seconds(60)) { ($0.quotes.ticks["LONG"]?.count ?? 0) == 400 && $0.ticks == 410 }
        #expect(after.state.quotes.ticks["LONG"] == Array(0..<400), "\(cluster.authority.diagnostics)")
        #expect(after.state.quotes.ticks["ACME"] == Array(0..<10))
        #expect(after.state.ticks == 410)
        // The cancelled lookup never ran again, and the initial action was not applied twice.
        #expect(after.state.lookup == Search.State(query: "slow", results: ["slow:1"], finished: [], cancelled: ["slow"]))
        #expect(after.state.quotes.targets == ["ACME": 10, "LONG": 400])
        let stats = try await WireProbe(actions: cluster.endpoints.actions).stats(within: .seconds(10)) { $0["subscriptions_running"] == 0 }
        #expect(stats["jobs_dispatched"] == 0)
        await desk.close()
        await cluster.stop()
    }
}
