import Foundation
import OrderFulfilment
import Testing

/// order-node as it is deployed: an authority, a worker, an observer and senders, each its own
/// process on loopback, to an exact final state.
@Suite(.serialized) struct OrderNodeTests {
    /// One line of `observe --json`.
    struct SnapshotLine: Decodable, Equatable {
        var version: UInt64
        var state: Fulfilment.State
    }

    func snapshot(_ line: String?) -> SnapshotLine? {
        line.flatMap { try? JSONDecoder().decode(SnapshotLine.self, from: Data($0.utf8)) }
    }

    @Test(.timeLimit(.minutes(2)))
    func ordersAreReservedChargedWithRetriesCancelledAndShippedAcrossProcesses() async throws {
        // Ephemeral loopback ports: the authority prints what it bound.
        let authority = try NodeProcess.orderNode(["authority", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"])
        let bound = try #require(await authority.waitForLine { $0.hasPrefix(#"{"actions""#) }, "no endpoints: \(authority.diagnostics)")
        let endpoints = try JSONDecoder().decode([String: String].self, from: Data(bound.utf8))
        let (actions, workers, feed) = (try #require(endpoints["actions"]), try #require(endpoints["workers"]), try #require(endpoints["feed"]))

        // The gateway fails the first attempt of each charge (retried: --attempts 3); the
        // warehouse takes 0.2 s, so a charge ends first and its order's lane holds its result.
        let worker = try NodeProcess.orderNode(["worker", "--authority", workers, "--attempts", "3", "--gateway-failures", "1", "--warehouse-delay", "0.2"])
        let observer = try NodeProcess.orderNode(["observe", "--feed", feed, "--actions", actions, "--json"])
        #expect(await observer.waitForLine { snapshot($0) == SnapshotLine(version: 0, state: Fulfilment.State()) } != nil,
                "\(observer.output)\(observer.diagnostics)")

        func send(_ batch: [String]) async throws -> NodeProcess {
            // One at a time, in the order given.
            let sender = try NodeProcess.orderNode(["send", "--actions", actions, "--concurrency", "1"] + batch, name: "send")
            #expect(await sender.waitForExit(timeout: .seconds(60)) == 0, "\(sender.diagnostics)")
            return sender
        }
        _ = try await send([#"{"restock":{"sku":"mug","quantity":10,"priceCents":1250}}"#])
        let placed = try await send([
            #"{"place":{"order":"A3","sku":"mug","quantity":20,"card":"tok_ok"}}"#,
            #"{"place":{"order":"A1","sku":"mug","quantity":2,"card":"tok_ok"}}"#,
            #"{"place":{"order":"A2","sku":"mug","quantity":3,"card":"tok_declined"}}"#,
        ])
        #expect(placed.output.last?.contains(#""sent":3,"acked":3,"failed":0"#) == true, "\(placed.output)")

        // A1 reserved then paid (its charge retried once); A2 declined three times, cancelled.
        let settled = await observer.waitForLine { line in
            let orders = snapshot(line)?.state.orders
            return orders?["A1"]?.status == .paid && orders?["A2"]?.status == .cancelled
        }
        #expect(settled != nil, "\(observer.output)\(observer.diagnostics)\(worker.diagnostics)")
        _ = try await send([#"{"ship":{"order":"A1","address":"1 High St"}}"#])

        // An action the app does not have: refused before anything is sent, naming the app's.
        let wrong = try NodeProcess.orderNode(["send", "--actions", actions, #"{"cancel":{"order":"A1"}}"#], name: "send-wrong")
        #expect(await wrong.waitForExit() == 64)
        #expect(wrong.stderr == #"order-node: send: '{"cancel":{"order":"A1"}}' is not an action of this app: 'cancel' is not a case of Fulfilment.Action; its cases are restock, place, ship"# + "\n")

        let expected = SnapshotLine(version: 10, state: Fulfilment.State(
            stock: ["mug": StockItem(available: 8, priceCents: 1250)],
            orders: [
                "A1": Order(sku: "mug", quantity: 2, amountCents: 2500, status: .shipped,
                            history: ["placed", "reserved PICK-A1", "charged pay-A1", "dispatched", "shipped TRACK-A1"]),
                "A2": Order(sku: "mug", quantity: 3, amountCents: 3750, status: .cancelled,
                            history: ["placed", "reserved PICK-A2", "payment failed: card tok_declined declined (after 3 attempts)"]),
            ],
            refusals: ["place A3: 20 mug wanted, 10 available"]
        ))
        let final = await observer.waitForLine { snapshot($0)?.state.orders["A1"]?.status == .shipped }
        #expect(snapshot(final) == expected, "\(observer.output)\(observer.diagnostics)")
        let once = try NodeProcess.orderNode(["observe", "--actions", actions, "--feed", feed, "--once", "--json"], name: "observe-once")
        #expect(await once.waitForExit() == 0, "\(once.diagnostics)")
        #expect(once.output.count == 1 && snapshot(once.output.first) == expected, "\(once.output)")

        for process in [observer, worker, authority] {
            process.signal(SIGTERM)
            #expect(await process.waitForExit(timeout: .seconds(15)) == 0, "\(process.diagnostics)")
        }
        // A1: reservation, charge (on its second attempt), shipment; A2: reservation; A2's charge failed.
        #expect(worker.stderr.contains("stopped after 4 job(s) done, 1 failed"), "\(worker.diagnostics)")
        #expect(authority.stderr.contains("stopped at version 10 after 5 action(s)"), "\(authority.diagnostics)")
    }
}
