import Dispatch
import Foundation
import MessagePack
import ReactorCore
import ReactorLog
import SchemaFixtures
import Synchronization
import Testing
@testable import ReactorBus
import ReactorStorage
import ReactorWire
import ZeroMQ

/// An authority of release 2 of an app starting on release 1's data directory: the snapshot and
/// the journal tail are migrated through the app's `AppSchema`, or refused with both versions
/// named. The test thread plays the authority's loop, as in AuthorityDurabilityTests.
@Suite struct SchemaEvolutionTests {
    let directory: TemporaryDirectory
    let writer = HeaderWriter()
    let log = LogCapture()

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// An engine and its durability for release `R` of "tally", recovered from the directory.
    func open<R: Reactor>(_ reactor: R, schema: AppSchema, every: UInt64 = 1_000_000) throws -> (AuthorityDurability<R>, AuthorityEngine<R>) {
        var persistence = PersistenceConfiguration(directory: directory.path)
        persistence.snapshotEveryRecords = every
        let logger = log.logger("test", level: .debug)
        var configuration = AuthorityConfiguration(appName: "tally", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.persistence = persistence
        configuration.schema = schema
        let engine = AuthorityEngine(reactor: reactor, configuration: configuration, logger: logger, journaling: true)
        let durability = try AuthorityDurability<R>(configuration: persistence, app: "tally", logger: logger)
        try durability.recover(into: engine, schema: schema)
        return (durability, engine)
    }

    /// One loop turn: `actions` from client c1 numbered from `first`, journaled and durable.
    func turn<R: Reactor>(_ durability: AuthorityDurability<R>, _ engine: AuthorityEngine<R>, _ actions: [R.Action], from first: UInt64) throws {
        for (offset, action) in actions.enumerated() {
            let payload = try MessagePackEncoder().encode(action)
            engine.handleClient([[1]] + ClientMessage.action(clientID: "c1", clientSeq: first + UInt64(offset), payload: payload).frames(writer), now: 0)
        }
        let now = MonotonicClock.milliseconds()
        let outbox = engine.takeOutbox(.init(checkpointAtRecords: durability.checkpointDemand(now: now)))
        let lsn = try durability.append(outbox.records)
        durability.snapshot(outbox.checkpoint, coveringThrough: lsn, now: now)
        try durability.awaitDurable(through: lsn)
        engine.absorb(durability.takeReport())
    }

    func close<R: Reactor>(_ durability: AuthorityDurability<R>, _ engine: AuthorityEngine<R>) {
        durability.finishSnapshotInProgress()
        durability.close(final: durability.wantsFinalSnapshot ? engine.takeOutbox(.init(checkpointAtRecords: 0)).checkpoint : nil)
    }

    /// Release 1's data: 10 × add(3) and one addLater(5) whose job is still open (its effect in
    /// the ledger), then `finish`: a graceful close (final snapshot) or a crash (nothing more).
    func writeRelease1(gracefully: Bool) throws {
        let (durability, engine) = try open(TallyV1(), schema: TallyV1.schema)
        try turn(durability, engine, Array(repeating: .add(3), count: 10), from: 1)
        try turn(durability, engine, [.addLater(5)], from: 11)
        #expect(engine.sequencer.state == TallyV1.State(count: 30))
        #expect(engine.sequencer.openJobCount == 1)
        if gracefully { close(durability, engine) }
    }

    func expectRelease2State(_ engine: AuthorityEngine<TallyV2>) throws {
        #expect(engine.sequencer.state == TallyV2.State(total: 30, label: "tally"))
        #expect(engine.sequencer.version == 10)
        #expect(engine.sequencer.actionSeq == 11)
        let job = JobID(actionSeq: 11, effectIndex: 0)
        #expect(engine.sequencer.openEffect(job) == .later(5), "the open job's effect survives the migration")
        // The job finishes under release 2: its mutation has the new shape.
        #expect(engine.dispatchUnreportedJobs(now: 0) == 1)
        let worker = PeerID([7])
        engine.handleWorker([worker.bytes] + WorkerMessage.ready(name: "w", app: "tally", capacity: 4, kinds: [], schema: 2).frames(writer), now: 0)
        let payload = try MessagePackEncoder().encode(TallyV2.Mutation.added(amount: 5))
        engine.handleWorker([worker.bytes] + WorkerMessage.emit(job: job, emitIndex: 0, payload: payload).frames(writer), now: 0)
        engine.handleWorker([worker.bytes] + WorkerMessage.done(job: job, emitCount: 1).frames(writer), now: 0)
        #expect(engine.sequencer.state == TallyV2.State(total: 35, label: "tally"))
    }

    @Test func aGracefullyStoppedRelease1DirectoryIsMigratedFromItsSnapshot() throws {
        try writeRelease1(gracefully: true)
        let (durability, engine) = try open(TallyV2(), schema: TallyV2.schema)
        #expect(log.containing("migrated snapshot").count == 1)
        #expect(log.containing("migrated snapshot").first?.contains("from schema version 1 to 2") == true)
        try expectRelease2State(engine)
        close(durability, engine)
        // Written by release 2 now: opening it again migrates nothing.
        let (again, recovered) = try open(TallyV2(), schema: TallyV2.schema)
        #expect(log.containing("migrated").count == 1)
        #expect(recovered.sequencer.state == TallyV2.State(total: 35, label: "tally"))
        close(again, recovered)
    }

    @Test func aCrashedRelease1JournalTailIsMigratedRecordByRecord() throws {
        try writeRelease1(gracefully: false)
        do {
            let (durability, engine) = try open(TallyV2(), schema: TallyV2.schema)
            #expect(log.containing("migrated 11 journal record(s) from schema version(s) 1 to 2").count == 1, "\(log.containing("migrated"))")
            try expectRelease2State(engine)
            // A crash again (the durability is dropped unclosed): the marker written at the
            // upgrade says the records after it are release 2's.
            try turn(durability, engine, [.add(1)], from: 12)
        }
        let (again, recovered) = try open(TallyV2(), schema: TallyV2.schema)
        #expect(recovered.sequencer.state == TallyV2.State(total: 36, label: "tally"))
        #expect(log.containing("migrated 11 journal record(s)").count == 2, "the release 1 records before the marker, once per start: \(log.containing("migrated"))")
        close(again, recovered)
    }

    @Test func release1RefusesRelease2DataNamingBothVersions() throws {
        try writeRelease1(gracefully: true)
        let (durability, engine) = try open(TallyV2(), schema: TallyV2.schema)
        close(durability, engine)
        #expect(throws: SchemaError.newerData(app: "tally", stored: 2, current: 1, source: "snapshot \(directory.snapshots)/snapshot-00000000000000000012.snap")) {
            _ = try open(TallyV1(), schema: TallyV1.schema)
        }
    }

    @Test func withoutAMigrationTheAuthorityRefusesInsteadOfADecodingError() throws {
        try writeRelease1(gracefully: false)
        let error = try #require(throws: SchemaError.self) { _ = try open(TallyV2(), schema: AppSchema(version: 2)) }
        #expect(error == .noMigration(app: "tally", stored: 1, current: 2, missing: 1, source: "journal record 1"))
        #expect(error.description.contains("schema version 1"))
        #expect(error.description.contains("schema version 2"))
        #expect(error.description.contains("SchemaMigration(from: 1"))
    }

    @Test func aMigrationThatThrowsIsReportedWithItsStep() throws {
        try writeRelease1(gracefully: true)
        let broken = AppSchema(version: 2, migrations: [SchemaMigration(from: 1, state: { _ in throw TallyMigrationError.missing("count") })])
        let error = try #require(throws: SchemaError.self) { _ = try open(TallyV2(), schema: broken) }
        guard case .migrationFailed(let app, let from, let source, let detail) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(app == "tally")
        #expect(from == 1)
        #expect(source.hasPrefix("snapshot "))
        #expect(detail == "missing(\"count\")")
    }

    @Test func aWorkerOfAnotherSchemaIsRefusedUnlessDeclaredCompatible() throws {
        var configuration = AuthorityConfiguration(appName: "tally", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.schema = AppSchema(version: 3, compatibleVersions: [2])
        let engine = AuthorityEngine(reactor: TallyV2(), configuration: configuration, logger: Logger(label: "test", sink: .discard), journaling: false)
        let old = PeerID([1]), compatible = PeerID([2])
        engine.handleWorker([old.bytes] + WorkerMessage.ready(name: "old", app: "tally", capacity: 1, kinds: [], schema: 1).frames(writer), now: 0)
        engine.handleWorker([compatible.bytes] + WorkerMessage.ready(name: "new", app: "tally", capacity: 1, kinds: [], schema: 2).frames(writer), now: 0)
        let sent = try engine.takeOutbox().toWorkers.map { (PeerID($0[0]), try AuthorityToWorker(frames: Array($0.dropFirst()))) }
        #expect(sent.map(\.0) == [old, compatible, compatible])
        #expect(sent[0].1 == .error(ref: 0, code: .wrongApp, message: AuthorityEngine<TallyV2>.schemaRefusal(app: "tally", peer: 1, own: configuration.schema)))
        #expect(sent[1].1 == .welcome(heartbeatMilliseconds: 1_000))
        #expect(sent[2].1 == .heartbeat(features: AuthorityFeature.all))
        #expect(engine.metrics[.wrongApp] == 1)
        // The pong tells clients and observers the version and what it accepts.
        engine.handleClient([[9]] + ClientMessage.ping(requestID: 4).frames(writer), now: 0)
        let pong = try engine.takeOutbox().promptReplies.map { try AuthorityReply(frames: Array($0.dropFirst())) }
        #expect(pong == [.pong(requestID: 4, version: 0, startID: engine.startID, app: "tally", schema: 3, compatible: [2])])
    }

    @Test func peersAgreeWhenEitherSideDeclaresTheOtherCompatible() {
        #expect(AppSchema(version: 2).agrees(withAuthority: 2, accepting: []))
        #expect(!AppSchema(version: 1).agrees(withAuthority: 2, accepting: []))
        #expect(AppSchema(version: 1).agrees(withAuthority: 2, accepting: [1]))
        #expect(AppSchema(version: 2, compatibleVersions: [1]).agrees(withAuthority: 1, accepting: []))
    }

    @Test func migrationStepsRunInOrderAndAMissingStepIsNamed() throws {
        let step = { (from: UInt32) in SchemaMigration(from: from, state: { $0 }) }
        let schema = AppSchema(version: 4, migrations: [step(3), step(1), step(2)])
        #expect(try schema.path(from: 1, app: "a", source: "s").map(\.from) == [1, 2, 3])
        #expect(try schema.path(from: 4, app: "a", source: "s").isEmpty)
        #expect(throws: SchemaError.noMigration(app: "a", stored: 1, current: 5, missing: 4, source: "s")) {
            _ = try AppSchema(version: 5, migrations: [step(1), step(2), step(3)]).path(from: 1, app: "a", source: "s")
        }
        #expect(throws: SchemaError.newerData(app: "a", stored: 6, current: 4, source: "s")) { _ = try schema.path(from: 6, app: "a", source: "s") }
    }
}
