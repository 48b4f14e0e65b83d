import Foundation
import MessagePack
import ReactorApps
import ReactorLog
import ReactorStorage
import ReactorWire
import Synchronization
import Testing
import TestSupport
import ZeroMQ
@testable import ReactorBus

/// Snapshots written from a replica of the state (``SnapshotReplica``): the test thread plays
/// the loop as in ``AuthorityDurabilityTests``, whose fixtures these tests share. Every snapshot
/// the replica writes must hold exactly the bytes of the loop's own checkpoint at its LSN.
extension AuthorityDurabilityTests {
    /// Lets a snapshot whose LSN became durable start (as the loop's next turn does), then
    /// waits for it and reports it to the engine.
    func settle(_ durability: AuthorityDurability<Counter>, _ engine: AuthorityEngine<Counter>, now: UInt64 = MonotonicClock.milliseconds()) {
        _ = durability.checkpointDemand(now: now)
        finishSnapshot(durability, engine)
    }

    /// The newest snapshot's payload, when it covers the journal through `lsn`.
    func snapshotPayload(at lsn: UInt64, in path: String? = nil) throws -> [UInt8]? {
        let newest = try SnapshotStore(directory: path ?? directory.path, app: "counter").loadNewest()
        return newest?.lsn == lsn ? newest?.payload : nil
    }

    @Test func onceASnapshotIsLargeTheReplicaWritesTheNextOnesWithTheLoopsExactBytes() throws {
        let (durability, engine) = try makeDurability(every: 100, replicaAbove: 0)
        try turn(durability, engine, count: 100, from: 1)
        settle(durability, engine)
        #expect(engine.metrics[.snapshotsWritten] == 1)
        #expect(lines(containing: "snapshots are written from a replica of the state from now on: the one at journal record 100 has").count == 1)
        #expect(engine.metrics.snapshotReplica == 1)
        // The loop takes no checkpoint any more: its state is never shared with a snapshot.
        #expect(durability.checkpointDemand(now: MonotonicClock.milliseconds()) == nil)

        try turn(durability, engine, count: 60, from: 101)
        try turn(durability, engine, count: 40, from: 161)
        let at200 = try checkpointBytes(engine)
        settle(durability, engine)
        #expect(engine.metrics[.snapshotsWritten] == 2)
        #expect(try snapshotPayload(at: 200) == at200)

        // Another client's actions: the replica's client ledger follows too.
        try turn(durability, engine, count: 100, from: 1, client: "c2")
        let at300 = try checkpointBytes(engine)
        settle(durability, engine)
        #expect(engine.metrics[.snapshotsWritten] == 3)
        #expect(try snapshotPayload(at: 300) == at300)
        #expect(try SnapshotStore(directory: directory.path, app: "counter").snapshotLSNs() == [200, 300])
        #expect(durability.checkpointDemand(now: MonotonicClock.milliseconds()) == nil)

        try turn(durability, engine, count: 10, from: 101, client: "c2")
        let final = try checkpointBytes(engine)
        close(durability, engine)
        let (reopened, recovered) = try makeDurability(every: 100)
        #expect(try checkpointBytes(recovered) == final)
        #expect(lines(containing: "restored snapshot at journal record 310").count == 1, "the final snapshot is the loop's")
        close(reopened, recovered)
    }

    /// The feed's snapshots come from the replica: at the LSN just journaled it hands back its
    /// own state encoded as the loop would, with the version and action sequence asked for; at a
    /// mark it did not reach it fails rather than hand back another state; once stopped, every
    /// request still queued is answered with a failure, so the loop never waits for it.
    @Test func theReplicaEncodesTheFeedsSnapshotAtTheMarkAndAnswersEveryRequest() async throws {
        let (durability, engine) = try makeDurability(every: 100, replicaAbove: 0)
        try turn(durability, engine, count: 100, from: 1)
        settle(durability, engine)
        #expect(durability.replicaRuns)
        try turn(durability, engine, count: 7, from: 101)
        let delivered = Mutex<[StateEncode.Done]>([])
        let deliver: @Sendable (StateEncode.Done) -> Void = { done in delivered.withLock { $0.append(done) } }
        #expect(durability.encodeState(lsn: 107, version: 107, actionSeq: 107, deliver: deliver))
        // A mark past what was journaled: the replica never reaches it there.
        #expect(durability.encodeState(lsn: 107, version: 108, actionSeq: 108, deliver: deliver))
        let both = await eventually { delivered.withLock { $0.count == 2 ? $0 : nil } }
        let (first, second) = (try #require(both?.first), try #require(both?.last))
        #expect((first.version, first.actionSeq) == (107, 107))
        #expect(try MessagePackDecoder().decode(Counter.State.self, from: Array(try first.result.get())) == Counter.State(count: 107))
        #expect(try first.result.get() == (try engine.encodeState()))
        guard case .failure(let failure) = second.result, case SnapshotReplica<Counter>.Failure.diverged? = failure as? SnapshotReplica<Counter>.Failure else {
            Issue.record("expected the replica to refuse a mark it did not reach, got \(second.result)")
            close(durability, engine)
            return
        }

        // A replica that stopped answers a request at once, with a failure.
        let payload = try #require(try snapshotPayload(at: 100))
        let configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        let path = directory.path
        let stopped = SnapshotReplica(setup: .init(reactor: Counter(), configuration: configuration, logger: Logger(label: "test", sink: .discard)),
                                      snapshot: payload, lsn: 100, records: [], makeDestination: { try SnapshotStore(directory: path, app: "counter") })
        stopped.stop()
        stopped.encodeState(at: .init(lsn: 100, version: 100, actionSeq: 100), deliver: deliver)
        let third = delivered.withLock { $0.count == 3 ? $0.last : nil }
        guard case .failure(let error)? = third?.result, case SnapshotReplica<Counter>.Failure.stopped? = error as? SnapshotReplica<Counter>.Failure else {
            Issue.record("expected a stopped replica to answer at once, got \(String(describing: third))")
            close(durability, engine)
            return
        }

        // The loop's close stops its replica: the durability then has none to ask.
        close(durability, engine)
        #expect(!durability.replicaRuns)
        #expect(!durability.encodeState(lsn: 107, version: 107, actionSeq: 107, deliver: deliver))
    }

    /// An encoding the replica could not make because it disagrees with the loop retires it at
    /// once: the next requests are encoded from the loop's state instead of asking it again.
    /// A failure that is not the replica's, or a replica that had stopped, changes nothing.
    @Test func aReplicaWhoseEncodingFailedIsRetiredAtOnce() async throws {
        let (durability, engine) = try makeDurability(every: 100, replicaAbove: 0)
        try turn(durability, engine, count: 100, from: 1)
        settle(durability, engine)
        #expect(durability.replicaRuns)
        let delivered = Mutex<StateEncode.Done?>(nil)
        #expect(durability.encodeState(lsn: 100, version: 101, actionSeq: 101) { done in delivered.withLock { $0 = done } })
        let done = await eventually { delivered.withLock { $0 } }
        guard case .failure(let error)? = done?.result else {
            Issue.record("expected the replica to refuse a mark it did not reach, got \(String(describing: done))")
            close(durability, engine)
            return
        }
        struct NotTheReplicas: Error {}
        durability.replicaEncodingFailed(NotTheReplicas())
        durability.replicaEncodingFailed(SnapshotReplica<Counter>.Failure.stopped)
        #expect(durability.replicaRuns)
        durability.replicaEncodingFailed(error)
        #expect(!durability.replicaRuns)
        #expect(lines(containing: "snapshot replica stopped (the replica reached journal record 100, version 100").count == 1)
        close(durability, engine)
    }

    /// A replica whose encoding fails while it writes a snapshot is asked for no more encodings
    /// at once, and retired once that snapshot is collected: retired before, the snapshot in
    /// progress was never collected, and no snapshot was ever taken again.
    @Test func aReplicaThatFailsWhileWritingASnapshotIsRetiredOnceItIsCollected() async throws {
        let (durability, engine) = try makeDurability(every: 100, replicaAbove: 0)
        try turn(durability, engine, count: 100, from: 1)
        settle(durability, engine)
        #expect(durability.replicaRuns)
        // The snapshot at 200 is asked of the replica, and starts once 200 is durable.
        try turn(durability, engine, count: 100, from: 101)
        durability.collectSnapshot(now: MonotonicClock.milliseconds())
        let delivered = Mutex<StateEncode.Done?>(nil)
        #expect(durability.encodeState(lsn: 200, version: 201, actionSeq: 201) { done in delivered.withLock { $0 = done } })
        let done = await eventually { delivered.withLock { $0 } }
        guard case .failure(let error)? = done?.result else {
            Issue.record("expected the replica to refuse a mark it did not reach, got \(String(describing: done))")
            close(durability, engine)
            return
        }
        durability.replicaEncodingFailed(error)
        #expect(!durability.replicaRuns, "no more encodings go to it")
        let collected = await eventually {
            durability.collectSnapshot(now: MonotonicClock.milliseconds())
            engine.absorb(durability.takeReport())
            return engine.metrics[.snapshotsWritten] == 2
        }
        #expect(collected, "the snapshot the replica was writing is collected")
        #expect(lines(containing: "snapshot replica stopped (the replica reached journal record 200, version 200").count == 1)
        // The loop's checkpoints take over.
        try turn(durability, engine, count: 100, from: 201)
        let at300 = try checkpointBytes(engine)
        settle(durability, engine)
        #expect(engine.metrics[.snapshotsWritten] == 3)
        #expect(try snapshotPayload(at: 300) == at300)
        close(durability, engine)
    }

    @Test func belowTheThresholdTheLoopKeepsTakingCheckpoints() throws {
        let (durability, engine) = try makeDurability(every: 100, replicaAbove: 1 << 20)
        try turn(durability, engine, count: 100, from: 1)
        settle(durability, engine)
        #expect(durability.checkpointDemand(now: MonotonicClock.milliseconds()) == 100)
        try turn(durability, engine, count: 100, from: 101)
        let at200 = try checkpointBytes(engine)
        settle(durability, engine)
        #expect(try snapshotPayload(at: 200) == at200)
        #expect(engine.metrics[.snapshotsWritten] == 2)
        #expect(lines(containing: "replica").isEmpty)
        #expect(engine.metrics.snapshotReplica == 0)
        close(durability, engine)
    }

    @Test func recoveryStartsTheReplicaFromTheSnapshotAndTheRecordsAfterIt() throws {
        let (durability, engine) = try makeDurability(every: 100, replicaAbove: 0)
        try turn(durability, engine, count: 100, from: 1)
        settle(durability, engine)
        try turn(durability, engine, count: 50, from: 101)
        // The files as a SIGKILL now would leave them: the snapshot at 100, 50 records after it.
        let copy = try TemporaryDirectory()
        try FileManager.default.removeItem(atPath: copy.path)
        try FileManager.default.copyItem(atPath: directory.path, toPath: copy.path)
        try FileManager.default.removeItem(atPath: copy.path + "/LOCK")
        close(durability, engine)

        let (reopened, recovered) = try makeDurability(every: 100, on: copy.path, replicaAbove: 0)
        #expect(lines(containing: "snapshots are written from a replica of the state: the one recovered has").count == 1)
        #expect(lines(containing: "(50 record(s) replayed)").count == 1)
        #expect(reopened.checkpointDemand(now: MonotonicClock.milliseconds()) == nil)
        try turn(reopened, recovered, count: 50, from: 151)
        let at200 = try checkpointBytes(recovered)
        settle(reopened, recovered)
        #expect(recovered.metrics[.snapshotsWritten] == 1)
        #expect(recovered.metrics.snapshotReplica == 1)
        #expect(try snapshotPayload(at: 200, in: copy.path) == at200)
        close(reopened, recovered)
    }

    @Test func aReplicaThatDisagreesWithTheLoopIsRetiredAndCheckpointsTakeOver() throws {
        let (durability, engine) = try makeDurability(every: 100, replicaAbove: 0)
        let start = MonotonicClock.milliseconds()
        try turn(durability, engine, count: 100, from: 1, now: start)
        settle(durability, engine, now: start)
        try turn(durability, engine, count: 99, from: 101, now: start)
        // The 200th action's turn, its snapshot asked for with a version the loop did not have.
        let payload = try MessagePackEncoder().encode(Counter.Action.countUp)
        engine.handleClient([[1]] + ClientMessage.action(clientID: "c1", clientSeq: 200, payload: payload).frames(writer), now: start)
        let outbox = engine.takeOutbox(.init(checkpointAtRecords: durability.checkpointDemand(now: start)))
        #expect(outbox.checkpoint == nil)
        let lsn = try durability.append(outbox.records)
        durability.snapshot(nil, coveringThrough: lsn, at: (outbox.version + 1, outbox.actionSeq), now: start)
        try durability.awaitDurable(through: lsn)
        settle(durability, engine, now: start)
        #expect(engine.metrics[.snapshotsWritten] == 1, "nothing written at 200")
        #expect(lines(containing: "snapshot replica stopped (the replica reached journal record 200, version 200, action 200 where the loop's state was at record 200, version 201, action 200)").count == 1)
        #expect(try SnapshotStore(directory: directory.path, app: "counter").snapshotLSNs() == [100])
        #expect(engine.metrics.snapshotReplica == 0)
        #expect(engine.metrics.snapshotReplicaBacklogBytes == 0)

        // Retried like any failed write, after 1 s, from the loop's checkpoint.
        #expect(durability.checkpointDemand(now: start + 500) == nil)
        #expect(durability.checkpointDemand(now: start + 1_000) == 0)
        try turn(durability, engine, count: 1, from: 201, now: start + 1_000)
        let at201 = try checkpointBytes(engine)
        settle(durability, engine, now: start + 1_000)
        #expect(try snapshotPayload(at: 201) == at201)
        #expect(engine.metrics[.snapshotsWritten] == 2)
        #expect(lines(containing: "from now on").count == 1, "a retired replica does not come back")
        close(durability, engine)
    }
}
