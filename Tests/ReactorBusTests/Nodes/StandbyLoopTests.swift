import Foundation
import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorLog
import ReactorStorage
import Testing
import TestSupport
import ZeroMQ

/// A standby's turn against a scripted primary (a ROUTER speaking the replication protocol):
/// `durable` leaves once the records are on disk, before they are applied, and a record that
/// cannot be applied stops the standby without a snapshot that would claim it.
@Suite struct StandbyLoopTests {
    /// Waits (polling, bounded) for the next message from the standby; returns its routing id and header.
    func nextMessage(_ router: ZMQSocket, within timeout: Duration = promptly) async throws -> (peer: [UInt8], message: ReplicationMessage)? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let frames = try router.tryReceiveMultipart(), frames.count >= 2, let message = ReplicationMessage.decode(frames[1]) {
                return (frames[0], message)
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    func record(_ record: AuthorityRecord) -> [UInt8] {
        let writer = MessagePackWriter()
        record.pack(into: writer)
        return writer.bytes
    }

    @Test func aRecordThatCannotBeAppliedStopsTheStandbyAfterItsDurableAndNoSnapshotClaimsIt() async throws {
        let context = try ZMQContext()
        let data = try TemporaryDirectory()
        let endpoint = ipcEndpoint("standby-loop")
        let router = try ZMQSocket(context: context, type: .router)
        try router.set(.linger, 0)
        try router.bind(endpoint)
        var configuration = AuthorityConfiguration.onIPC(app: "counter", name: "standby-loop")
        configuration.persistence = PersistenceConfiguration(directory: data.path)
        configuration.replication = ReplicationConfiguration(standbyOf: endpoint)
        configuration.heartbeatInterval = .milliseconds(200)
        let log = LogCapture()
        let standby = try AuthorityNode(reactor: Counter(), configuration: configuration, logger: log.logger("standby"), context: context)
        _ = try await standby.start()

        var hello = try #require(await nextMessage(router))
        while hello.message.type != .hello { hello = try #require(await nextMessage(router)) }
        #expect(hello.message.after == 0)
        try router.send([hello.peer, ReplicationMessage(.welcome, lsn: 0).encoded()])
        // LSN 1 applies; LSN 2 holds bytes that are no Counter action.
        let countUp = try MessagePackEncoder().encode(Counter.Action.countUp)
        try router.send([hello.peer, ReplicationMessage(.records, first: 1).encoded(),
                         record(.accepted(client: "c", clientSeq: 1, action: countUp)),
                         record(.accepted(client: "c", clientSeq: 2, action: [0xC1]))])

        // Both records are on disk and said so before the second failed to apply.
        var durable: UInt64?
        while durable != 2, let next = try await nextMessage(router) {
            if next.message.type == .durable { durable = next.message.lsn }
        }
        #expect(durable == 2)
        await standby.wait()
        #expect(standby.failure != nil)
        #expect(!log.containing("standby stopped").isEmpty, "\(log.all)")

        // No snapshot covers LSN 2 (the state never had it): a restart reads the journal and
        // fails on the same record, rather than starting from a state that silently lacks it.
        let stored = DataDirectoryReader(directory: data.path, app: "counter")
        #expect(try stored.snapshots().map(\.lsn).allSatisfy { $0 < 2 })
        var reader = try stored.journal().records(after: 0)
        var lsns: [UInt64] = []
        while let next = try reader.next() { lsns.append(next.lsn) }
        #expect(lsns == [1, 2])
        router.close()
        #expect(context.terminate(timeout: promptly))
    }
}
