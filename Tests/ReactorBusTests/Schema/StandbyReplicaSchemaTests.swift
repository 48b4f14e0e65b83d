import MessagePack
import ReactorCore
import ReactorStorage
import SchemaFixtures
import Testing
import ZeroMQ
@testable import ReactorBus

/// A snapshot replica seeded from a standby's checkpoint reads the records after it in the schema
/// version they were written in, as the standby itself does (``RecordReplayer/stored``): a standby
/// of release 2 may still be following release 1's records, which no schema mark has announced.
extension SchemaEvolutionTests {
    /// `records` packed as a journal holds them.
    func payloads(_ records: [AuthorityRecord]) -> [[UInt8]] {
        records.map { record in
            let writer = MessagePackWriter()
            record.pack(into: writer)
            return writer.bytes
        }
    }

    @Test func aReplicaSeededOnAStandbyReadsTheRecordsAfterItInTheirOwnSchemaVersion() throws {
        // Release 1's journal: 10 × add(3), then addLater(5), whose job is open.
        try writeRelease1(gracefully: false)
        var persistence = PersistenceConfiguration(directory: directory.path)
        persistence.snapshotEveryRecords = 1_000_000
        persistence.replicaSnapshotsAbove = 0
        let logger = log.logger("test", level: .debug)
        var configuration = AuthorityConfiguration(appName: "tally", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.persistence = persistence
        configuration.schema = TallyV2.schema
        let engine = AuthorityEngine(reactor: TallyV2(), configuration: configuration, logger: logger, journaling: true)
        let durability = try AuthorityDurability<TallyV2>(configuration: persistence, app: "tally", logger: logger)
        durability.replicaSetup = .init(reactor: TallyV2(), configuration: configuration, logger: logger)
        // Recovered as a standby recovers: its journal is its primary's, and stays unmarked.
        var replayer = try durability.recover(into: engine, schema: TallyV2.schema, markSchema: false)
        #expect(replayer.stored == 1)

        // The standby's checkpoint at LSN 11 is written, and starts the replica.
        let start = MonotonicClock.milliseconds()
        var position = (engine.sequencer.version, engine.sequencer.actionSeq)
        durability.snapshot(engine.checkpoint(), coveringThrough: 11, at: position, recordsSchema: replayer.stored, now: start)
        durability.finishSnapshotInProgress()
        #expect(log.containing("snapshots are written from a replica of the state from now on: the one at journal record 11").count == 1, "\(log.all)")

        // The open job's report as release 1's primary journaled it: its mutation in release 1's shape.
        let job = JobID(actionSeq: 11, effectIndex: 0)
        let followed = payloads([.emitted(job: job, emitIndex: 0, mutation: try MessagePackEncoder().encode(TallyV1.Mutation.added(5))),
                                 .completed(job: job, emitCount: 1)])
        try durability.appendReplicated(followed, first: 12)
        #expect(try durability.commitReplicated() == 13)
        try replayer.replay(followed.enumerated().map { JournalRecord(lsn: 12 + UInt64($0.offset), payload: $0.element) }, into: engine)
        #expect(engine.sequencer.state == TallyV2.State(total: 35, label: "tally"))

        // A snapshot due (by time) at 13: the replica's, with the standby's exact bytes.
        let later = start + 3_600_000
        #expect(durability.checkpointDemand(now: later) == nil)
        position = (engine.sequencer.version, engine.sequencer.actionSeq)
        durability.snapshot(nil, coveringThrough: 13, at: position, recordsSchema: replayer.stored, now: later)
        durability.finishSnapshotInProgress()
        #expect(log.containing("snapshot replica stopped").isEmpty, "\(log.all)")
        let newest = try SnapshotStore(directory: directory.path, app: "tally").loadNewest()
        #expect(newest?.lsn == 13)
        #expect(newest?.payload == (try MessagePackEncoder().encode(engine.checkpoint())))
        durability.close(final: nil)
    }
}
