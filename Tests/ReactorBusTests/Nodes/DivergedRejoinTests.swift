import Foundation
import ReactorApps
@testable import ReactorBus
import ReactorLog
import Testing
import TestSupport
import ZeroMQ

/// An old primary's data directory rejoining as a standby of the new primary: its journal may
/// hold records the new primary never had (accepted, never replicated, never acked) at LSNs the
/// new primary has since filled with its own. It is refused (`diverged`), also when its journal is
/// not longer than the primary's; counted for `sync` acks, the primary released acks on a standby
/// that held other records, and a failover to it lost them and applied their resends again.
@Suite struct DivergedRejoinTests {
    func configuration(_ name: String, data: String, replication: ReplicationConfiguration?) -> AuthorityConfiguration {
        .replicatedCounter("diverged-\(name)", data: data, replication: replication)
    }

    @Test func anOldPrimarysUnreplicatedTailIsRefusedAlsoWhenItsJournalIsNotLonger() async throws {
        let context = try ZMQContext()
        let dataP = try TemporaryDirectory()
        let dataS = try TemporaryDirectory()
        let dataT = try TemporaryDirectory()
        let r1 = ipcEndpoint("diverged-r1")
        let r2 = ipcEndpoint("diverged-r2")
        let log = LogCapture()

        // 1. P is a sync primary; S follows it. Ten actions acked (both journals: LSN 1...10).
        let p = try AuthorityNode(reactor: Counter(), configuration: configuration("p", data: dataP.path, replication: .init(endpoint: r1, mode: .sync)),
                                  logger: log.logger("P"), context: context)
        let pEndpoints = try await p.start()
        let sConfiguration = configuration("s", data: dataS.path, replication: .init(endpoint: r2, mode: .sync, standbyOf: r1))
        let s = try AuthorityNode(reactor: Counter(), configuration: sConfiguration, logger: log.logger("S"), context: context)
        _ = try await s.start()
        let alice = try ActionClient<Counter>(configuration: .init(actionsEndpoint: pEndpoints.actions, clientID: "alice", timeout: .seconds(3), retries: 0),
                                              logger: quietLogger, context: context)
        try alice.start()
        for expected in UInt64(1) ... 10 { #expect(try await alice.send(.countUp).version == expected) }

        // 2. S stops for a moment; P journals three more actions and holds their acks (sync, no standby).
        s.stop()
        await s.wait()
        let unacked = (0 ..< 3).map { _ in Task { try? await alice.send(.countUp) } }
        #expect(await eventually { p.metrics.journalLSN == 13 }, "\(log.all)")
        // 3. P is lost: none of LSN 11...13 was acked.
        p.stop()
        await p.wait()
        for task in unacked { #expect(await task.value == nil, "P acked an action no standby had") }
        alice.close()
        await alice.wait()

        // 4. S, which has every acked action, comes back and is promoted; bob's five actions are
        //    journaled at LSN 11...15, their acks held (no standby yet).
        let s2 = try AuthorityNode(reactor: Counter(), configuration: sConfiguration, logger: log.logger("S2"), context: context)
        _ = try await s2.start()
        let s2Endpoints = try await s2.promote()
        let bob = try ActionClient<Counter>(configuration: .init(actionsEndpoint: s2Endpoints.actions, clientID: "bob", timeout: .seconds(20), retries: 0),
                                            logger: quietLogger, context: context)
        try bob.start()
        let bobSends = (0 ..< 5).map { _ in Task { try? await bob.send(.countUp) } }
        #expect(await eventually { s2.metrics.journalLSN == 15 }, "\(log.all)")

        // 5. P's directory (LSN 11...13: alice's unacked actions) asks to follow S2: refused.
        let pAsStandby = try AuthorityNode(reactor: Counter(), configuration: configuration("p2", data: dataP.path, replication: .init(standbyOf: r2)),
                                           logger: log.logger("P2"), context: context)
        _ = try await pAsStandby.start()
        #expect(await eventually { pAsStandby.failure != nil }, "\(log.all)")
        guard case .refused(let code, let message)? = pAsStandby.failure as? ReplicationError else {
            Issue.record("expected the old primary to be refused, got \(String(describing: pAsStandby.failure))")
            for node in [pAsStandby, s2] { node.stop(); await node.wait() }
            bob.close()
            await bob.wait()
            return
        }
        #expect(code == "diverged")
        #expect(message.contains("record at LSN 13"), "\(message)")
        await pAsStandby.wait()

        // 6. A standby on an empty directory follows S2 instead: bob's acks are released.
        let t = try AuthorityNode(reactor: Counter(), configuration: configuration("t", data: dataT.path, replication: .init(standbyOf: r2)),
                                  logger: log.logger("T"), context: context)
        _ = try await t.start()
        var bobAcks: [ActionAck] = []
        for task in bobSends { if let ack = await task.value { bobAcks.append(ack) } }
        bob.close()
        await bob.wait()
        #expect(bobAcks.map(\.actionSeq).sorted() == [11, 12, 13, 14, 15])

        // 7. S2 is lost; T is promoted: bob's acked actions are there, and a resend is not applied again.
        s2.stop()
        await s2.wait()
        let promoted = try await t.promote()
        let bobAgain = try ActionClient<Counter>(configuration: .init(actionsEndpoint: promoted.actions, clientID: "bob", timeout: .seconds(5)),
                                                 logger: quietLogger, context: context)
        try bobAgain.start()
        let resend = try await bobAgain.send(.countUp)
        #expect(resend.clientSeq == 1 && resend.actionSeq == bobAcks.first { $0.clientSeq == 1 }?.actionSeq)
        #expect(try await bobAgain.snapshot().state == Counter.State(count: 15))
        bobAgain.close()
        await bobAgain.wait()
        t.stop()
        await t.wait()
        #expect(context.terminate(timeout: promptly))
    }
}
