import Coordination
import Foundation
@testable import ReactorNodeKit
import ReactorLog
import Synchronization
import Testing
import TestSupport
import TestTraits

/// A standby's registration in etcd (on a real etcd started by the test on loopback): written
/// when progress moves, back after its lease ended, gone once withdrawn.
@Suite(.spawnsProcesses) struct StandbyRegistrarTests {
    let key = "/reactorbus/counter/standbys/b"

    func registration(_ client: EtcdClient) throws -> StandbyRegistration? {
        try client.get(key).map { try JSONDecoder().decode(StandbyRegistration.self, from: $0.value) }
    }

    @Test func theRegistrationFollowsProgressComesBackAfterItsLeaseEndedAndIsWithdrawn() async throws {
        let etcd = try await EtcdServer.start()
        defer { Task { await etcd.stop() } }
        let client = try EtcdClient(endpointList: etcd.clientURL)
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "authority", level: .info, sink: .capture { line in lines.withLock { $0.append(line) } })
        // Every update renews, so the test drives the renewal by calling update, without waiting
        // for time to pass; the lease is long enough not to end by itself on a loaded machine
        // (with a 1 s lease it sometimes did, before the test revoked it).
        let registrar = StandbyRegistrar(client: client, key: key, ttl: .seconds(60), renewEvery: .zero, logger: logger)
        // A failed etcd call is retried at the next update (a freshly started etcd on a busy
        // machine can miss the 500 ms the registrar allows a call).
        func update(_ progress: StandbyRegistration) async {
            let deadline = ContinuousClock.now + .seconds(10)
            repeat { await registrar.update(progress) } while registrar.published != progress && ContinuousClock.now < deadline
        }
        let first = StandbyRegistration(version: 5, lsn: 7, endpoints: ["actions": "ipc:///tmp/b-actions"])
        await update(first)
        #expect(registrar.published == first)
        #expect(try registration(client) == first)
        let moved = StandbyRegistration(version: 5, lsn: 9, endpoints: first.endpoints)
        await update(moved)
        #expect(try registration(client) == moved)

        // The lease ends under it (as when the process was paused past it): etcd drops the key.
        let lease = try #require(try client.get(key)?.lease)
        #expect(try client.revokeLease(lease))
        #expect(try client.get(key) == nil)
        // The next renewal finds it ended, and the update after registers again.
        let deadline = ContinuousClock.now + .seconds(10)
        while try client.get(key) == nil, ContinuousClock.now < deadline {
            await registrar.update(moved)
        }
        #expect(try registration(client) == moved)
        #expect(try client.get(key)?.lease != lease)
        #expect(lines.withLock { $0 }.filter { $0.contains("the lease of this standby's registration ended; registering again") }.count == 1)

        registrar.withdraw()
        #expect(try client.get(key) == nil)
        #expect(registrar.published == nil)
    }
}
