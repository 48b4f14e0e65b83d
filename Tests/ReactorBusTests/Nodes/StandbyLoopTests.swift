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

    /// A standby on a fresh data directory following a scripted primary (`router`), welcomed at
    /// LSN 0, and `peer`, its routing id at the primary.
    struct Scripted {
        let context: ZMQContext
        let data: TemporaryDirectory
        let router: ZMQSocket
        let log: LogCapture
        let standby: AuthorityNode<Counter>
        let peer: [UInt8]
        let configuration: AuthorityConfiguration
    }

    /// As ``welcomedStandby(packed:persistence:)``; `packed`: the scripted primary's `welcome`
    /// says it sends a `records` message's payloads in one frame (else, as a primary of an older
    /// release, one frame each); `persistence` adjusts the standby's data directory settings.
    func welcomedStandby(packed: Bool = true, persistence: (inout PersistenceConfiguration) -> Void = { _ in }) async throws -> Scripted {
        let context = try ZMQContext()
        let data = try TemporaryDirectory()
        let router = try ZMQSocket(context: context, type: .router)
        let log = LogCapture()
        let endpoint = ipcEndpoint("standby-loop")
        try router.set(.linger, 0)
        try router.bind(endpoint)
        var configuration = AuthorityConfiguration.onIPC(app: "counter", name: "standby-loop")
        var stored = PersistenceConfiguration(directory: data.path)
        persistence(&stored)
        configuration.persistence = stored
        configuration.replication = ReplicationConfiguration(standbyOf: endpoint)
        // The scripted primary sends no heartbeats: a standby that heard nothing for 3
        // intervals would stop following it, which a loaded machine must not cause here.
        configuration.heartbeatInterval = .seconds(2)
        let standby = try AuthorityNode(reactor: Counter(), configuration: configuration, logger: log.logger("standby"), context: context)
        _ = try await standby.start()
        var hello = try #require(await nextMessage(router))
        while hello.message.type != .hello { hello = try #require(await nextMessage(router)) }
        #expect(hello.message.after == 0)
        #expect(hello.message.packed == true)
        try router.send([hello.peer, ReplicationMessage(.welcome, lsn: 0, packed: packed ? true : nil).encoded()])
        return Scripted(context: context, data: data, router: router, log: log, standby: standby, peer: hello.peer, configuration: configuration)
    }

    /// Waits (bounded) until the standby reports `lsn` durable; returns the last LSN it reported.
    func durable(_ lsn: UInt64, from router: ZMQSocket) async throws -> UInt64? {
        var durable: UInt64?
        while durable != lsn, let next = try await nextMessage(router) {
            if next.message.type == .durable { durable = next.message.lsn }
        }
        return durable
    }

    /// Stops the standby, which must not have failed, and the scripted primary.
    func stopCleanly(_ scripted: Scripted) async {
        scripted.standby.stop()
        await scripted.standby.wait()
        #expect(scripted.standby.failure == nil)
        scripted.router.close()
        #expect(scripted.context.terminate(timeout: promptly))
    }

    func body(_ payloads: [[UInt8]]) -> [UInt8] {
        let writer = MessagePackWriter()
        ReplicationRecords.pack(payloads, into: writer)
        return writer.bytes
    }

    @Test func aRecordThatCannotBeAppliedStopsTheStandbyAfterItsDurableAndNoSnapshotClaimsIt() async throws {
        let scripted = try await welcomedStandby()
        let (context, data, router, log, standby, peer) = (scripted.context, scripted.data, scripted.router, scripted.log, scripted.standby, scripted.peer)
        // LSN 1 applies; LSN 2 holds bytes that are no Counter action.
        let countUp = try MessagePackEncoder().encode(Counter.Action.countUp)
        try router.send([peer, ReplicationMessage(.records, first: 1).encoded(),
                         body([record(.accepted(client: "c", clientSeq: 1, action: countUp)),
                               record(.accepted(client: "c", clientSeq: 2, action: [0xC1]))])])

        // Both records are on disk and said so before the second failed to apply.
        #expect(try await durable(2, from: router) == 2)
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

    /// A `records` message whose body is not one array of `bin` payloads (a frame per record, as
    /// protocol version 1 sent them; an element of another type; bytes that are no MessagePack)
    /// is dropped: nothing is journaled or applied, the standby logs it and says `hello` again
    /// from its journal's end, and the next well-formed message is journaled from LSN 1.
    @Test func aRecordsMessageWithAMalformedBodyIsDroppedAndTheStandbyAsksAgain() async throws {
        let scripted = try await welcomedStandby()
        let (context, data, router, log, standby, peer) = (scripted.context, scripted.data, scripted.router, scripted.log, scripted.standby, scripted.peer)
        let countUp = try MessagePackEncoder().encode(Counter.Action.countUp)
        let first = record(.accepted(client: "c", clientSeq: 1, action: countUp))
        let second = record(.accepted(client: "c", clientSeq: 2, action: countUp))
        let stringElement = MessagePackWriter()
        stringElement.packArrayHeader(1)
        stringElement.packString("accepted")
        let malformed: [[[UInt8]]] = [[first, second], [stringElement.bytes], [[0xC1]], [body([first]) + [0x00]]]
        // Each message is sent once the standby follows (it read the welcome), and each is
        // dropped, logged and answered with a hello before the next.
        #expect(await eventually { !log.containing("following the primary").isEmpty }, "\(log.all)")
        for (index, frames) in malformed.enumerated() {
            try router.send([peer, ReplicationMessage(.records, first: 1).encoded()] + frames)
            #expect(await eventually { log.containing("dropped a records message").count == index + 1 }, "\(log.all)")
            var hello = try #require(await nextMessage(router))
            while hello.message.type != .hello { hello = try #require(await nextMessage(router)) }
            #expect(hello.message.after == 0)
        }
        #expect(log.containing("dropped a records message").count == malformed.count, "\(log.all)")
        #expect(standby.metrics.version == 0)

        try router.send([peer, ReplicationMessage(.records, first: 1).encoded(), body([first, second])])
        #expect(try await durable(2, from: router) == 2)
        standby.stop()
        await standby.wait()
        #expect(standby.failure == nil)
        var reader = try DataDirectoryReader(directory: data.path, app: "counter").journal().records(after: 0)
        var payloads: [[UInt8]] = []
        while let next = try reader.next() { payloads.append(next.payload) }
        #expect(payloads == [first, second])
        router.close()
        #expect(context.terminate(timeout: promptly))
    }

    /// A snapshot written after the primary's last records is collected at the standby's next
    /// heartbeat (counted, its journal compacted), not only when more records come.
    @Test func aSnapshotWrittenWhileThePrimaryIsQuietIsCollectedAtTheNextHeartbeat() async throws {
        let scripted = try await welcomedStandby(persistence: { $0.snapshotEveryRecords = 3 })
        let countUp = try MessagePackEncoder().encode(Counter.Action.countUp)
        let records = (1 ... 3).map { record(.accepted(client: "c", clientSeq: UInt64($0), action: countUp)) }
        try scripted.router.send([scripted.peer, ReplicationMessage(.records, first: 1).encoded(), body(records)])
        #expect(try await durable(3, from: scripted.router) == 3)
        #expect(await eventually { scripted.standby.metrics[.snapshotsWritten] == 1 }, "\(scripted.log.all)")
        #expect(scripted.standby.metrics.version == 3)
        await stopCleanly(scripted)
    }

    /// A primary of an older release ignores `packed` and sends a frame per record: a standby
    /// welcomed without `packed` journals such a message as it always did.
    @Test func aStandbyFollowsAPrimaryThatSendsAFramePerRecord() async throws {
        let scripted = try await welcomedStandby(packed: false)
        let countUp = try MessagePackEncoder().encode(Counter.Action.countUp)
        let records = (1 ... 3).map { record(.accepted(client: "c", clientSeq: UInt64($0), action: countUp)) }
        try scripted.router.send([scripted.peer, ReplicationMessage(.records, first: 1).encoded()] + records)
        #expect(try await durable(3, from: scripted.router) == 3)
        #expect(await eventually { scripted.standby.metrics.version == 3 })
        scripted.standby.stop()
        await scripted.standby.wait()
        #expect(scripted.standby.failure == nil)
        var reader = try DataDirectoryReader(directory: scripted.data.path, app: "counter").journal().records(after: 0)
        var payloads: [[UInt8]] = []
        while let next = try reader.next() { payloads.append(next.payload) }
        #expect(payloads == records)
        scripted.router.close()
        #expect(scripted.context.terminate(timeout: promptly))
    }

    /// A standby answers a gap with a `hello` from inside its turn, after appending records it
    /// has not committed yet: the `hello` names them (its journal's end), and a primary that
    /// reads the standby's messages in order counts as durable only what its `durable` reports
    /// said, so no `sync` ack leaves on the strength of the `hello`.
    @Test func aHelloSentBeforeTheTurnsCommitCountsNothingDurableAtThePrimary() async throws {
        let scripted = try await welcomedStandby()
        let countUp = try MessagePackEncoder().encode(Counter.Action.countUp)
        let records = (1 ... 2_003).map { record(.accepted(client: "c", clientSeq: UInt64($0), action: countUp)) }
        #expect(await eventually { !scripted.log.containing("following the primary").isEmpty })
        // Records 1...2000 keep the standby busy while 2001...2003 and then a gap (records from
        // LSN 5000) arrive: it reads those in one turn and says hello before the turn's commit.
        try scripted.router.send([scripted.peer, ReplicationMessage(.records, first: 1).encoded(), body(Array(records[0 ..< 2_000]))])
        try scripted.router.send([scripted.peer, ReplicationMessage(.records, first: 2_001).encoded(), body(Array(records[2_000...]))])
        try scripted.router.send([scripted.peer, ReplicationMessage(.records, first: 5_000).encoded(), body([records[0]])])
        var set = ReplicaSet(window: 100, timeoutMilliseconds: 60_000)
        _ = set.hello(scripted.peer, ReplicationMessage(.hello, term: 0, app: "counter", schema: 1, after: 0), app: "counter", schema: 1, lastLSN: 5_000, now: 0)
        var reported: UInt64 = 0
        var helloAfter: UInt64?
        while helloAfter == nil, let next = try await nextMessage(scripted.router) {
            switch next.message.type {
            case .durable:
                reported = max(reported, next.message.lsn ?? 0)
                set.durable(scripted.peer, lsn: next.message.lsn ?? 0, now: 0)
            case .hello where next.message.after ?? 0 > 0:
                // (A hello from before the welcome, repeated every heartbeat until it came,
                // names an empty journal: not the one under test.)
                helloAfter = next.message.after
                _ = set.hello(scripted.peer, next.message, app: "counter", schema: 1, lastLSN: 5_000, now: 0)
            default:
                break
            }
        }
        #expect(helloAfter == 2_003, "the hello names the journal's end")
        #expect(set.bestDurable == reported, "durable only through the standby's last `durable`, not the hello's \(helloAfter ?? 0)")
        #expect(set.replicas[scripted.peer]?.sent == 2_003, "streaming resumes after the hello's LSN")
        #expect(set.credit(scripted.peer) == 100, "the records it has are not in flight")
        // The turn's commit then reports them.
        #expect(try await durable(2_003, from: scripted.router) == 2_003)
        await stopCleanly(scripted)
    }
}
