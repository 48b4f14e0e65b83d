import Foundation
import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorStorage
import Testing
import TestSupport
import ZeroMQ

/// A standby's snapshots of a large state come from a ``SnapshotReplica`` as a primary's do
/// (against the scripted primary of ``StandbyLoopTests``): the standby's loop stops taking
/// checkpoints, so its next `durable` never waits for a copy of the state. Every snapshot the
/// replica writes must hold exactly the bytes of the state at its LSN.
extension StandbyLoopTests {
    /// A snapshot every 3 records, from a replica whatever the state's size.
    static func replicaAlways(_ persistence: inout PersistenceConfiguration) {
        persistence.snapshotEveryRecords = 3
        persistence.replicaSnapshotsAbove = 0
    }

    /// `count` accepted `countUp` records of client "c", from client sequence `first`.
    func countUps(_ count: Int, from first: UInt64) throws -> [[UInt8]] {
        let countUp = try MessagePackEncoder().encode(Counter.Action.countUp)
        return (first ..< first + UInt64(count)).map { record(.accepted(client: "c", clientSeq: $0, action: countUp)) }
    }

    /// The snapshot bytes of the state `payloads` (the journal from LSN 1) make, applied as
    /// recovery applies them, by an engine of the standby's configuration.
    func expectedSnapshot(of payloads: [[UInt8]], _ configuration: AuthorityConfiguration) throws -> [UInt8] {
        let engine = AuthorityEngine(reactor: Counter(), configuration: configuration, logger: LogCapture().logger("expected"), journaling: true)
        var replayer = RecordReplayer<Counter>(schema: configuration.schema, app: "counter", stored: configuration.schema.version)
        for (index, payload) in payloads.enumerated() {
            try replayer.replay(JournalRecord(lsn: UInt64(index + 1), payload: payload), into: engine)
        }
        var bytes: [UInt8] = []
        try AuthorityDurability<Counter>.encode(engine.checkpoint()) { bytes = Array($0) }
        return bytes
    }

    /// The payload of the snapshot covering exactly `lsn`, once one is in the data directory
    /// (a writer's or the replica's thread writes it; bounded wait).
    func snapshot(at lsn: UInt64, in data: TemporaryDirectory) async -> [UInt8]? {
        var found: [UInt8]?
        _ = await eventually {
            found = try? DataDirectoryReader(directory: data.path, app: "counter").snapshots().first { $0.lsn == lsn }?.payload
            return found != nil
        }
        return found
    }

    /// Sends `records` one per message, from LSN `next` on, each once the one before is durable,
    /// until a snapshot newer than `lsn` is in the data directory; returns it. A snapshot starts
    /// only once the one before was collected, which a turn does when it finds it written: one
    /// record per turn makes its LSN the first the standby could take, whatever the timing.
    func feed(_ records: [[UInt8]], from next: inout UInt64, untilASnapshotAfter lsn: UInt64, _ scripted: Scripted) async throws -> (lsn: UInt64, payload: [UInt8])? {
        let reader = DataDirectoryReader(directory: scripted.data.path, app: "counter")
        while Int(next) <= records.count {
            try scripted.router.send([scripted.peer, ReplicationMessage(.records, first: next).encoded(), body([records[Int(next) - 1]])])
            guard try await durable(next, from: scripted.router) == next else { return nil }
            next += 1
            // A listing may name a file the standby deletes before it is read: that one is older.
            if let newest = (try? reader.snapshots())?.last, newest.lsn > lsn, let payload = newest.payload { return (newest.lsn, payload) }
        }
        return nil
    }

    @Test func aStandbysSnapshotsOfALargeStateComeFromAReplicaWithTheStatesExactBytes() async throws {
        let scripted = try await welcomedStandby(persistence: Self.replicaAlways)
        let (router, peer, log, data) = (scripted.router, scripted.peer, scripted.log, scripted.data)
        let records = try countUps(40, from: 1)
        // LSN 3: the standby's own checkpoint, which starts the replica once written.
        try router.send([peer, ReplicationMessage(.records, first: 1).encoded(), body(Array(records[0 ..< 3]))])
        #expect(try await durable(3, from: router) == 3)
        #expect(await snapshot(at: 3, in: data) == (try expectedSnapshot(of: Array(records[0 ..< 3]), scripted.configuration)))
        // The replica writes the next ones, each with the exact bytes of the state at its LSN.
        var next: UInt64 = 4
        let first = try #require(try await feed(records, from: &next, untilASnapshotAfter: 3, scripted))
        #expect(first.payload == (try expectedSnapshot(of: Array(records[0 ..< Int(first.lsn)]), scripted.configuration)))
        #expect(log.containing("snapshots are written from a replica of the state from now on: the one at journal record 3 has").count == 1, "\(log.all)")
        let second = try #require(try await feed(records, from: &next, untilASnapshotAfter: first.lsn, scripted))
        #expect(second.payload == (try expectedSnapshot(of: Array(records[0 ..< Int(second.lsn)]), scripted.configuration)))
        #expect(await eventually { scripted.standby.metrics.snapshotReplica == 1 })
        #expect(log.containing("snapshot replica stopped").isEmpty, "\(log.all)")
        await stopCleanly(scripted)
    }

    @Test func aStandbyThatInstallsItsPrimarysSnapshotStartsItsReplicaFromIt() async throws {
        let scripted = try await welcomedStandby(persistence: Self.replicaAlways)
        let (router, peer, log, data) = (scripted.router, scripted.peer, scripted.log, scripted.data)
        let records = try countUps(13, from: 1)
        // The primary's journal starts after its snapshot at LSN 10: the standby fetches it.
        let installed = try expectedSnapshot(of: Array(records[0 ..< 10]), scripted.configuration)
        #expect(await eventually { !log.containing("following the primary").isEmpty }, "\(log.all)")
        try router.send([peer, ReplicationMessage(.snapshot, lsn: 10, size: UInt64(installed.count)).encoded()])
        var request = try #require(await nextMessage(router))
        while request.message.type != .chunk { request = try #require(await nextMessage(router)) }
        #expect(request.message.lsn == 10 && request.message.offset == 0)
        try router.send([peer, ReplicationMessage(.snapshotChunk, lsn: 10, size: UInt64(installed.count), offset: 0).encoded(), installed])
        #expect(try await durable(10, from: router) == 10)
        #expect(log.containing("snapshots are written from a replica of the state: the one installed has \(installed.count) bytes").count == 1, "\(log.all)")

        // The replica follows from the installed state: its snapshot at 13 is the state of all 13.
        try router.send([peer, ReplicationMessage(.records, first: 11).encoded(), body(Array(records[10 ..< 13]))])
        #expect(try await durable(13, from: router) == 13)
        #expect(await snapshot(at: 13, in: data) == (try expectedSnapshot(of: records, scripted.configuration)))
        #expect(await eventually { scripted.standby.metrics.version == 13 && scripted.standby.metrics.snapshotReplica == 1 })
        #expect(log.containing("snapshot replica stopped").isEmpty, "\(log.all)")
        await stopCleanly(scripted)
    }
}
