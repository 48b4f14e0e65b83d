import Foundation
import ReactorApps
import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// The composed `shop` app (a cart and a detail child) served by one authority, with real
/// processes: workers of one part, an observer of one child's projection, initial actions that a
/// restart does not apply again.
@Suite(.spawnsProcesses) struct ComposedAppTests {
    typealias ShopClient = AppClient<Shop>

    @Test func aWorkerOfOnePartRunsOnlyThatPartsJobsAndTheOthersWait() async throws {
        let cluster = try await ClusterProcesses(app: "shop")
        let shop = try ShopClient(actions: cluster.endpoints.actions)
        // The fresh authority applied the initial mutation and action: `welcome` is shown and
        // its description waits for a worker of the detail part.
        let fresh = try await shop.state()
        #expect(fresh.version == 2)
        #expect(fresh.state.isOpen)
        #expect(fresh.state.detail.item == "welcome")
        #expect(fresh.state.views == 1)
        try cluster.addWorker(["--part", "cart"])
        try await cluster.waitForWorkers(1)
        let ack = try await shop.send(.buy(item: "tea", price: 3))
        #expect(ack.actionSeq == 2)
        let paid = try await shop.state { $0.cart.paid == [3] }
        #expect(paid.state.cart == ShopCart.State(items: [:], paid: [3], checkouts: 1), "\(cluster.authority.diagnostics)")
        #expect(paid.state.detail.description == nil)
        let waiting = try await WireProbe(actions: cluster.endpoints.actions).stats(within: .seconds(10)) { $0["open_jobs"] == 1 }
        #expect(waiting["open_jobs"] == 1)
        #expect(waiting["queued_jobs"] == 1)
        #expect(waiting["jobs_dispatched"] == 1)
        // A worker of the other part takes the waiting job.
        try cluster.addWorker(["--part", "detail"])
        let loaded = try await shop.state { $0.detail.description != nil }
        #expect(loaded.state.detail == ShopDetail.State(item: "welcome", description: "about welcome", loads: 1))
        let done = try await WireProbe(actions: cluster.endpoints.actions).stats(within: .seconds(10)) { $0["open_jobs"] == 0 }
        #expect(done["open_jobs"] == 0)
        #expect(done["queued_jobs"] == 0)
        #expect(done["jobs_dispatched"] == 2)
        #expect(done["version"] == 6)
        await shop.close()
        await cluster.stop()
    }

    @Test func aWorkerRefusesAPartTheAppDoesNotHave() async throws {
        let worker = try ChildProcess.node(["worker", "--app", "shop", "--authority", "tcp://127.0.0.1:9", "--part", "basket"], name: "worker")
        #expect(await worker.waitForExit() == 64)
        #expect(worker.diagnostics.contains("has no part 'basket'"))
        #expect(worker.diagnostics.contains("cart, detail"))
    }

    @Test func anObserverOfOneChildsProjectionGetsAValueOnlyWhenItChanges() async throws {
        let cluster = try await ClusterProcesses(app: "shop")
        try cluster.addWorker()
        let shop = try ShopClient(actions: cluster.endpoints.actions)
        _ = try await shop.state { $0.detail.loads == 1 }
        let observe = try ChildProcess.node(["observe", "--app", "shop", "--feed", cluster.endpoints.feed, "--actions", cluster.endpoints.actions,
                                             "--projection", "cart", "--json"], name: "observe")
        let first = try #require(await observe.waitForLine(), "\(observe.diagnostics)")
        #expect(first == #"{"version":3,"projection":"cart","value":{"checkouts":0,"items":{},"paid":[]}}"#)
        // Detail changes only: nothing for the cart's observer.
        for item in ["tea", "jam", "soap"] { _ = try await shop.send(.detail(.show(item: item))) }
        _ = try await shop.send(.cart(.add(item: "tea", price: 3)))
        for item in ["milk", "rice"] { _ = try await shop.send(.detail(.show(item: item))) }
        _ = try await shop.send(.cart(.remove(item: "tea")))
        let last = try await shop.state { $0.detail.description == "about rice" && $0.cart.items.isEmpty }
        #expect(last.state.cart.items.isEmpty)
        _ = await observe.waitForLine { $0.contains(#""items":{}"#) && !$0.hasPrefix(#"{"version":3,"#) }
        let lines = observe.output
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.dropFirst().first?.contains(#""items":{"tea":3}"#) == true, "\(lines)")
        let versions = lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["version"] as? Int
        }
        #expect(versions.count == 3)
        #expect(versions == versions.sorted())
        await shop.close()
        await observe.stop()
        await cluster.stop()
    }

    @Test func theAuthorityPublishesAProjectionOnlyWhenItsValueChanged() async throws {
        let cluster = try await ClusterProcesses(app: "shop")
        try cluster.addWorker()
        let shop = try ShopClient(actions: cluster.endpoints.actions)
        _ = try await shop.state { $0.detail.loads == 1 }
        let tap = try FeedTap(feed: cluster.endpoints.feed, topics: [FeedMessage.Topic.projection("cart")])
        #expect(try await tap.waitUntilSubscribed())
        for item in ["tea", "jam"] { _ = try await shop.send(.detail(.show(item: item))) }
        _ = try await shop.send(.cart(.add(item: "tea", price: 3)))
        _ = try await shop.send(.detail(.show(item: "milk")))
        _ = try await shop.send(.cart(.add(item: "tea", price: 3)))   // the same price: no change
        _ = try await shop.send(.cart(.remove(item: "tea")))
        let last = try await shop.state { $0.detail.description == "about milk" && $0.cart.items.isEmpty }
        // Everything published before a heartbeat of the final version has arrived by then.
        #expect(try await tap.read(timeout: .seconds(10)) { messages in
            messages.contains { if case .heartbeat(let version, _) = $0 { version >= last.version } else { false } }
        })
        let cart = tap.messages.compactMap { message -> UInt64? in
            if case .projection("cart", let version, _, _) = message { version } else { nil }
        }
        let counts = tap.messages.compactMap { message -> [UInt8]? in
            if case .projection("cart.count", _, _, let payload) = message { payload } else { nil }
        }
        // The value when the subscription arrived, the add, the remove.
        #expect(cart.count == 3, "\(tap.messages)")
        #expect(cart == cart.sorted())
        #expect(counts == [[0x00], [0x01], [0x00]])
        await shop.close()
        await cluster.stop()
    }

    @Test func theSwiftProjectionObserverFollowsOneChildsCount() async throws {
        let cluster = try await ClusterProcesses(app: "shop")
        try cluster.addWorker()
        let shop = try ShopClient(actions: cluster.endpoints.actions)
        _ = try await shop.send(.cart(.add(item: "tea", price: 3)))
        let context = try ZMQContext()
        var configuration = ObserverConfiguration(feedEndpoint: cluster.endpoints.feed, actionsEndpoint: cluster.endpoints.actions)
        configuration.appName = "shop"
        let observer = try ProjectionObserver(reactor: Shop(), projection: "cart.count", configuration: configuration,
                                              logger: Logger(label: "observer", sink: .discard), context: context)
        let first = try #require(try await observer.next(as: Int.self, timeout: .seconds(10)))
        #expect(first.state == 1)
        _ = try await shop.send(.detail(.show(item: "tea")))
        _ = try await shop.send(.cart(.add(item: "jam", price: 1)))
        let second = try #require(try await observer.next(as: Int.self, timeout: .seconds(10)))
        #expect(second.state == 2)
        #expect(second.version > first.version)
        #expect(try await observer.next(timeout: .milliseconds(300)) == nil)
        observer.close()
        context.terminate(timeout: .seconds(2))
        await shop.close()
        await cluster.stop()
    }

    @Test func observingAProjectionTheAppDoesNotHaveIsAUsageError() async throws {
        let observe = try ChildProcess.node(["observe", "--app", "shop", "--feed", "tcp://127.0.0.1:9", "--actions", "tcp://127.0.0.1:9",
                                             "--projection", "basket"], name: "observe")
        #expect(await observe.waitForExit() == 64)
        #expect(observe.diagnostics.contains("no projection 'basket'"))
    }

    @Test func aRestartDoesNotApplyTheInitialActionsAgain() async throws {
        let directory = NSTemporaryDirectory() + "reactorbus-shop-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func authority(_ endpoints: (actions: String, workers: String, feed: String)?) throws -> ChildProcess {
            try ChildProcess.node(["authority", "--app", "shop", "--data", directory, "--heartbeat", "0.5",
                                   "--actions", endpoints?.actions ?? "tcp://127.0.0.1:*", "--workers", endpoints?.workers ?? "tcp://127.0.0.1:*",
                                   "--feed", endpoints?.feed ?? "tcp://127.0.0.1:*"], name: "authority")
        }
        var node = try authority(nil)
        let endpoints = try await node.endpoints()
        let worker = try ChildProcess.node(["worker", "--app", "shop", "--authority", endpoints.workers, "--heartbeat", "0.5"], name: "worker")
        var shop = try ShopClient(actions: endpoints.actions)
        _ = try await shop.state { $0.detail.loads == 1 }
        _ = try await shop.send(.cart(.add(item: "tea", price: 3)))
        let before = try await shop.state { $0.cart.items.count == 1 }
        #expect(before.version == 4)
        await shop.close()
        node.signal(SIGKILL)
        await node.waitForExit()
        node = try authority(endpoints)
        _ = try await node.endpoints()
        shop = try ShopClient(actions: endpoints.actions)
        let after = try await shop.state()
        #expect(after.version == 4, "\(node.diagnostics)")
        #expect(after.state == before.state)
        #expect(after.state.views == 1)
        let stats = try await WireProbe(actions: endpoints.actions).stats()
        #expect(stats["action_seq"] == 2)
        #expect(!node.diagnostics.contains("fresh state"))
        // The journal holds the start once, first, before the client's action.
        let dump = try ChildProcess.node(["journal", "dump", "--app", "shop", "--data", directory], name: "dump")
        #expect(await dump.waitForExit() == 0, "\(dump.diagnostics)")
        let records = dump.output.compactMap { line in line.split(separator: " ").first { $0.hasPrefix("record=") } }
        #expect(records.first == "record=\"started\"", "\(dump.output)")
        #expect(records.filter { $0 == "record=\"started\"" }.count == 1)
        #expect(records.filter { $0 == "record=\"accepted\"" }.count == 1)
        await shop.close()
        await worker.stop()
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }
}
