import Dispatch
import Foundation
import MessagePack
import ReactorApps
import ReactorLog
import Synchronization
import Testing
@testable import ReactorBus
import ReactorStorage
import ReactorWire
import ZeroMQ

/// Snapshots written off the loop: the test thread plays the authority's loop (engine in,
/// journal append, `snapshotIfDue`), and the destination the writer thread writes to is gated,
/// slow or failing, so each ordering is forced by events, never by sleeps.
@Suite struct AuthorityDurabilityTests {
    let directory: TemporaryDirectory
    let writer = HeaderWriter()
    let log = LogCapture()

    init() throws {
        directory = try TemporaryDirectory()
    }

    // MARK: Fixtures

    /// A snapshot store on `directory` whose writes wait until the test releases them.
    final class GatedDestination: SnapshotDestination {
        let store: SnapshotStore
        let gate: Gate
        init(directory: String, gate: Gate) throws {
            store = try SnapshotStore(directory: directory, app: "counter")
            self.gate = gate
        }

        func write(_ payload: UnsafeRawBufferPointer, coveringThrough lsn: UInt64) throws -> SnapshotWriteResult {
            gate.writes.add(1, ordering: .relaxed)
            if gate.tornFile {
                // What a crash in the middle of the store's write leaves behind.
                try Data(payload.prefix(payload.count / 2)).write(to: URL(fileURLWithPath: store.path(for: lsn) + ".tmp"))
            }
            gate.started.signal()
            gate.release.wait()
            return try store.write(payload, coveringThrough: lsn)
        }
    }

    /// Events between the writer thread and the test.
    final class Gate: Sendable {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writes = Atomic<Int>(0)
        let tornFile: Bool
        init(tornFile: Bool = false) { self.tornFile = tornFile }

        /// Waits (bounded) until the writer thread is inside a write.
        func waitStarted() -> Bool { started.wait(timeout: .now() + 10) == .success }
    }

    /// Fails its first `failures` writes, then writes to a real store.
    final class FlakyDestination: SnapshotDestination {
        let store: SnapshotStore
        let attempts: Attempts
        init(directory: String, attempts: Attempts) throws {
            store = try SnapshotStore(directory: directory, app: "counter")
            self.attempts = attempts
        }

        func write(_ payload: UnsafeRawBufferPointer, coveringThrough lsn: UInt64) throws -> SnapshotWriteResult {
            let attempt = attempts.count.add(1, ordering: .relaxed).newValue
            guard attempt > attempts.failures else { throw PersistenceError.io(operation: "fsync", path: store.directory, errno: EIO) }
            return try store.write(payload, coveringThrough: lsn)
        }
    }

    final class Attempts: Sendable {
        let count = Atomic<Int>(0)
        let failures: Int
        init(failures: Int) { self.failures = failures }
    }

    /// `replicaAbove`: the durability may start a snapshot replica, once a snapshot has that many
    /// bytes (as a primary's loop allows); `nil`: never (as a standby).
    func makeDurability(every: UInt64, on path: String? = nil, replicaAbove: Int? = nil) throws -> (AuthorityDurability<Counter>, AuthorityEngine<Counter>) {
        var persistence = PersistenceConfiguration(directory: path ?? directory.path)
        persistence.snapshotEveryRecords = every
        persistence.replicaSnapshotsAbove = replicaAbove
        let logger = log.logger("test", level: .debug)
        var configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.persistence = persistence
        let engine = AuthorityEngine(reactor: Counter(), configuration: configuration, logger: logger, journaling: true)
        let durability = try AuthorityDurability<Counter>(configuration: persistence, app: "counter", logger: logger)
        if replicaAbove != nil { durability.replicaSetup = .init(reactor: Counter(), configuration: configuration, logger: logger) }
        try durability.recover(into: engine)
        return (durability, engine)
    }

    /// One loop turn as the loop carries it out: `count` countUp actions from `client`; the
    /// outbox taken with the durability's checkpoint demand; its records journaled; a snapshot
    /// started from its checkpoint (or asked of the replica) if one is due; what the durability
    /// did reported to the engine.
    func turn(_ durability: AuthorityDurability<Counter>, _ engine: AuthorityEngine<Counter>, count: Int, from first: UInt64,
              client: String = "c1", now: UInt64 = MonotonicClock.milliseconds()) throws {
        let payload = try MessagePackEncoder().encode(Counter.Action.countUp)
        for seq in first..<(first + UInt64(count)) {
            engine.handleClient([[1]] + ClientMessage.action(clientID: client, clientSeq: seq, payload: payload).frames(writer), now: now)
        }
        let outbox = engine.takeOutbox(.init(checkpointAtRecords: durability.checkpointDemand(now: now)))
        let lsn = try durability.append(outbox.records)
        durability.snapshot(outbox.checkpoint, coveringThrough: lsn, at: (outbox.version, outbox.actionSeq), now: now)
        try durability.awaitDurable(through: lsn)
        engine.absorb(durability.takeReport())
    }


    /// Waits for the snapshot being written and reports it to the engine.
    func finishSnapshot(_ durability: AuthorityDurability<Counter>, _ engine: AuthorityEngine<Counter>) {
        durability.finishSnapshotInProgress()
        engine.absorb(durability.takeReport())
    }

    /// Closes as the loop does when it stops: the final snapshot from the engine's last outbox.
    /// `unappended`: records of an outbox taken earlier that never reached the journal.
    func close(_ durability: AuthorityDurability<Counter>, _ engine: AuthorityEngine<Counter>, unappended: Int = 0) {
        durability.finishSnapshotInProgress()
        let final = durability.wantsFinalSnapshot
            ? durability.finalCheckpoint(from: engine.takeOutbox(.init(checkpointAtRecords: 0)), unappended: unappended) : nil
        durability.close(final: final)
        engine.absorb(durability.takeReport())
    }

    /// `count` countUp actions handled by the engine, their records left in its outbox.
    func handle(_ engine: AuthorityEngine<Counter>, count: Int, from first: UInt64) throws {
        let payload = try MessagePackEncoder().encode(Counter.Action.countUp)
        for seq in first..<(first + UInt64(count)) {
            engine.handleClient([[1]] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: payload).frames(writer), now: 0)
        }
    }

    func checkpointBytes(_ engine: AuthorityEngine<Counter>) throws -> [UInt8] {
        try MessagePackEncoder().encode(engine.checkpoint())
    }

    func lines(containing text: String) -> [String] {
        log.containing(text)
    }

    // MARK: Tests

    @Test func theLoopKeepsServingWhileASlowSnapshotIsWrittenAndItCoversExactlyItsLSN() throws {
        let gate = Gate()
        let (durability, engine) = try makeDurability(every: 100)
        let path = directory.path
        durability.snapshotDestination = { try GatedDestination(directory: path, gate: gate) }
        try turn(durability, engine, count: 100, from: 1)
        #expect(gate.waitStarted())
        // The writer is inside its write and stays there until released: the loop goes on.
        let atSnapshot = try checkpointBytes(engine)
        for batch in 0..<5 { try turn(durability, engine, count: 50, from: 101 + UInt64(batch) * 50) }
        engine.handleClient([[1]] + ClientMessage.ping(requestID: 7).frames(writer), now: 0)
        let replies = try engine.takeOutbox().promptReplies.map { try AuthorityReply(frames: Array($0.dropFirst())) }
        #expect(replies == [.pong(requestID: 7, version: 350, startID: engine.startID, app: "counter")])
        #expect(engine.metrics[.actionsAccepted] == 350)
        #expect(engine.metrics[.journalRecords] == 350)
        // Due again (250 records since), but one is being written: no second write started.
        #expect(gate.writes.load(ordering: .relaxed) == 1)
        #expect(engine.metrics[.snapshotsWritten] == 0)

        gate.release.signal()
        finishSnapshot(durability, engine)
        #expect(engine.metrics[.snapshotsWritten] == 1)
        let store = try SnapshotStore(directory: path, app: "counter")
        #expect(try store.snapshotLSNs() == [100])
        let first = try #require(try store.loadNewest())
        #expect(first.payload == atSnapshot, "the snapshot holds the state at record 100, not the later one")
        let decoded = try MessagePackDecoder().decode(AuthorityCheckpoint<Counter>.self, from: first.payload)
        #expect(decoded.sequencer.version == 100)
        #expect(decoded.sequencer.state.count == 100)

        // The next turn starts the one that was waiting, at the journal's end.
        gate.release.signal()
        try turn(durability, engine, count: 0, from: 351)
        #expect(gate.waitStarted())
        finishSnapshot(durability, engine)
        #expect(try store.snapshotLSNs() == [100, 350])
        #expect(engine.metrics[.snapshotsWritten] == 2)
        #expect(gate.writes.load(ordering: .relaxed) == 2)
        let final = try checkpointBytes(engine)
        close(durability, engine)
        #expect(gate.writes.load(ordering: .relaxed) == 2, "nothing new to cover at close")

        let (reopened, recovered) = try makeDurability(every: 100)
        #expect(try checkpointBytes(recovered) == final)
        #expect(lines(containing: "restored snapshot at journal record 350").count == 1)
        #expect(lines(containing: "record(s) replayed)").last?.contains("(0 record(s) replayed)") == true)
        close(reopened, recovered)
    }

    @Test func aCrashDuringASnapshotRecoversExactlyFromTheJournal() throws {
        let gate = Gate(tornFile: true)
        let (durability, engine) = try makeDurability(every: 100)
        let path = directory.path
        durability.snapshotDestination = { try GatedDestination(directory: path, gate: gate) }
        try turn(durability, engine, count: 100, from: 1)
        try turn(durability, engine, count: 50, from: 101, client: "c2")
        #expect(gate.waitStarted())
        // The files as a SIGKILL now would leave them: a torn temporary snapshot, the whole journal.
        let copy = try TemporaryDirectory()
        try FileManager.default.removeItem(atPath: copy.path)
        try FileManager.default.copyItem(atPath: path, toPath: copy.path)
        try FileManager.default.removeItem(atPath: copy.path + "/LOCK")
        #expect(try TemporaryDirectory.list(copy.snapshots) == ["snapshot-00000000000000000100.snap.tmp"])
        let atCrash = try checkpointBytes(engine)
        // This write, then the final one at close.
        gate.release.signal()
        gate.release.signal()
        close(durability, engine)
        #expect(gate.writes.load(ordering: .relaxed) == 2)

        let (reopened, recovered) = try makeDurability(every: 100, on: copy.path)
        #expect(try checkpointBytes(recovered) == atCrash)
        #expect(try TemporaryDirectory.list(copy.snapshots) == [], "the torn temporary file is removed")
        #expect(lines(containing: "(150 record(s) replayed)").count == 1)
        close(reopened, recovered)
    }

    @Test func aCrashRightAfterASnapshotRestoresItAndReplaysOnlyTheTail() throws {
        let (durability, engine) = try makeDurability(every: 100)
        try turn(durability, engine, count: 100, from: 1)
        finishSnapshot(durability, engine)
        #expect(engine.metrics[.snapshotsWritten] == 1)
        try turn(durability, engine, count: 30, from: 101)
        let copy = try TemporaryDirectory()
        try FileManager.default.removeItem(atPath: copy.path)
        try FileManager.default.copyItem(atPath: directory.path, toPath: copy.path)
        try FileManager.default.removeItem(atPath: copy.path + "/LOCK")
        let atCrash = try checkpointBytes(engine)
        close(durability, engine)

        let (reopened, recovered) = try makeDurability(every: 100, on: copy.path)
        #expect(try checkpointBytes(recovered) == atCrash)
        #expect(lines(containing: "restored snapshot at journal record 100").count == 1)
        #expect(lines(containing: "(30 record(s) replayed)").count == 1)
        close(reopened, recovered)
    }

    @Test func aFailedWriteIsRetriedWithBackoffNotOnEveryBatch() throws {
        let attempts = Attempts(failures: .max)
        let (durability, engine) = try makeDurability(every: 10)
        let path = directory.path
        durability.snapshotDestination = { try FlakyDestination(directory: path, attempts: attempts) }
        let start = MonotonicClock.milliseconds()
        var seq: UInt64 = 1
        // 10 s of turns, every 50 ms of the injected clock, each with new records: attempts at
        // +0, +1 s, +3 s, +7 s (the next would be at +15 s).
        for now in stride(from: start, to: start + 10_000, by: 50) {
            try turn(durability, engine, count: 10, from: seq, now: now)
            seq += 10
            finishSnapshot(durability, engine)
        }
        #expect(attempts.count.load(ordering: .relaxed) == 4)
        #expect(engine.metrics[.snapshotsWritten] == 0)
        let failures = lines(containing: "failed (attempt ")
        #expect(failures.count == 4)
        #expect(failures.map { $0.contains("next attempt in") } == [true, true, true, true])
        for (index, delay) in [1_000, 2_000, 4_000, 8_000].enumerated() where index < failures.count {
            #expect(failures[index].contains("attempt \(index + 1); the journal still has everything; next attempt in \(delay) ms"), "\(failures[index])")
        }
        #expect(try TemporaryDirectory.list(directory.snapshots) == [])
        let final = try checkpointBytes(engine)
        close(durability, engine)
        #expect(attempts.count.load(ordering: .relaxed) == 5, "close makes one last attempt")

        // Nothing was compacted: the journal alone restores every record.
        let (reopened, recovered) = try makeDurability(every: 10)
        #expect(try checkpointBytes(recovered) == final)
        #expect(lines(containing: "(\(seq - 1) record(s) replayed)").count == 1)
        close(reopened, recovered)
    }

    @Test func afterAFailedWriteTheRetryThatSucceedsResetsTheBackoff() throws {
        let attempts = Attempts(failures: 2)
        let (durability, engine) = try makeDurability(every: 10)
        let path = directory.path
        durability.snapshotDestination = { try FlakyDestination(directory: path, attempts: attempts) }
        let start = MonotonicClock.milliseconds()
        var seq: UInt64 = 1
        var lsnAtSuccess: UInt64?
        // Fails at +0 and +1 s, succeeds at +3 s; then due by count again on each later turn.
        for now in stride(from: start, to: start + 3_100, by: 50) {
            try turn(durability, engine, count: 10, from: seq, now: now)
            seq += 10
            finishSnapshot(durability, engine)
            if lsnAtSuccess == nil, engine.metrics[.snapshotsWritten] == 1 { lsnAtSuccess = seq - 1 }
        }
        #expect(lsnAtSuccess == UInt64(3_000 / 50 + 1) * 10)
        #expect(attempts.count.load(ordering: .relaxed) == 2 + 2, "the success, then one more on the next turn")
        #expect(engine.metrics[.snapshotsWritten] == 2)
        #expect(lines(containing: "failed (attempt ").count == 2)
        close(durability, engine)
    }

    @Test func theCheckpointDemandCountsDownToTheNextSnapshotAndIsNoneWhileOneIsWritten() throws {
        let gate = Gate()
        let (durability, engine) = try makeDurability(every: 100)
        let path = directory.path
        durability.snapshotDestination = { try GatedDestination(directory: path, gate: gate) }
        let now = MonotonicClock.milliseconds()
        #expect(durability.checkpointDemand(now: now) == 100)
        try turn(durability, engine, count: 30, from: 1, now: now)
        #expect(durability.checkpointDemand(now: now) == 70)
        #expect(durability.checkpointDemand(now: now + 60_000) == 0, "due by time with the 30 records already journaled")
        try turn(durability, engine, count: 70, from: 31, now: now)
        #expect(gate.waitStarted())
        #expect(durability.checkpointDemand(now: now) == nil, "one snapshot at a time")
        gate.release.signal()
        finishSnapshot(durability, engine)
        #expect(engine.metrics[.snapshotsWritten] == 1)
        #expect(durability.checkpointDemand(now: now) == 100)
        #expect(durability.checkpointDemand(now: now + 60_000) == 1, "due by time, but only once a record needs covering")
        close(durability, engine)
        #expect(gate.writes.load(ordering: .relaxed) == 1)
    }

    /// A disk whose first group-commit sync waits for the test, or whose syncs fail.
    final class GatedSync: Sendable {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let failing: Bool
        let calls = Atomic<Int>(0)
        init(failing: Bool = false) { self.failing = failing }
        func sync(_ fd: Int32, _ path: String) throws {
            if calls.add(1, ordering: .relaxed).newValue == 1 {
                started.signal()
                _ = release.wait(timeout: .now() + 10)
            }
            if failing { throw PersistenceError.io(operation: "fdatasync", path: path, errno: EIO) }
            _ = fdatasync(fd)
        }
    }

    /// `count` countUp actions journaled as the loop does, without waiting for the disk: the
    /// LSN their acks wait for.
    func unsyncedTurn(_ durability: AuthorityDurability<Counter>, _ engine: AuthorityEngine<Counter>, count: Int, from first: UInt64) throws -> UInt64 {
        let payload = try MessagePackEncoder().encode(Counter.Action.countUp)
        for seq in first..<(first + UInt64(count)) {
            engine.handleClient([[1]] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: payload).frames(writer), now: 0)
        }
        let now = MonotonicClock.milliseconds()
        let outbox = engine.takeOutbox(.init(checkpointAtRecords: durability.checkpointDemand(now: now)))
        let lsn = try durability.append(outbox.records)
        durability.snapshot(outbox.checkpoint, coveringThrough: lsn, now: now)
        return lsn
    }

    @Test func aSnapshotIsWrittenOnlyOnceTheRecordsItCoversAreDurable() throws {
        let gate = Gate()
        let disk = GatedSync()
        let (durability, engine) = try makeDurability(every: 100)
        let path = directory.path
        durability.snapshotDestination = { try GatedDestination(directory: path, gate: gate) }
        durability.syncCall = disk.sync
        let lsn = try unsyncedTurn(durability, engine, count: 100, from: 1)
        #expect(lsn == 100)
        #expect(disk.started.wait(timeout: .now() + 10) == .success)
        // The sync hangs: nothing is durable, so the due snapshot must not start (it would get
        // ahead of the journal), and no other can be demanded meanwhile.
        #expect(durability.durableLSN == 0)
        try durability.collectSyncs(now: MonotonicClock.milliseconds())
        #expect(durability.checkpointDemand(now: MonotonicClock.milliseconds()) == nil)
        #expect(gate.writes.load(ordering: .relaxed) == 0)
        // The loop goes on meanwhile: a second batch is written and its sync requested.
        #expect(try unsyncedTurn(durability, engine, count: 20, from: 101) == 120)

        disk.release.signal()
        try durability.awaitDurable(through: 120)
        #expect(durability.durableLSN == 120)
        #expect(gate.waitStarted())
        gate.release.signal()
        finishSnapshot(durability, engine)
        let store = try SnapshotStore(directory: path, app: "counter")
        #expect(try store.snapshotLSNs() == [100])
        let written = try MessagePackDecoder().decode(AuthorityCheckpoint<Counter>.self, from: try #require(try store.loadNewest()).payload)
        #expect(written.sequencer.version == 100)
        #expect(disk.calls.load(ordering: .relaxed) <= 2, "the syncs requested during the first were coalesced")
        gate.release.signal()
        close(durability, engine)
        #expect(try store.snapshotLSNs() == [100, 120])
    }

    /// The committed LSN reaches the engine's `journal_lsn` (what elected standbys compare) in
    /// the report after it moved, and only then.
    @Test func theCommittedLSNIsReportedEachTimeItMoves() throws {
        let (durability, engine) = try makeDurability(every: 1_000)
        try turn(durability, engine, count: 3, from: 1)
        #expect(durability.durableLSN == 3)
        #expect(engine.currentMetrics().journalLSN == 3)
        #expect(engine.currentMetrics().dictionary["journal_lsn"] == 3)
        #expect(durability.takeReport().journalLSN == nil)
        try turn(durability, engine, count: 2, from: 4)
        #expect(engine.currentMetrics().journalLSN == 5)
        close(durability, engine)
    }

    @Test func aFailedGroupCommitFailsTheJournalAndNothingMoreIsWritten() throws {
        let disk = GatedSync(failing: true)
        let (durability, engine) = try makeDurability(every: 1_000)
        durability.syncCall = disk.sync
        let lsn = try unsyncedTurn(durability, engine, count: 10, from: 1)
        disk.release.signal()
        #expect(throws: PersistenceError.self) { try durability.awaitDurable(through: lsn) }
        #expect(durability.durableLSN == 0)
        #expect(durability.failure != nil)
        #expect(!durability.wantsFinalSnapshot)
        #expect(throws: PersistenceError.self) { _ = try unsyncedTurn(durability, engine, count: 1, from: 11) }
        close(durability, engine)
        #expect(try TemporaryDirectory.list(directory.snapshots) == [])
    }

    /// A group commit's `fdatasync` failed and the loop stops before it collected the outcome:
    /// the stop's own commit would succeed (Linux reports the error once per open file, and the
    /// syncer's descriptor shares the journal's), so it must fail instead, and nothing the failed
    /// sync covered is acknowledged or snapshotted.
    @Test func aGroupCommitFailureNotYetCollectedFailsTheCommitAtTheStop() throws {
        let disk = GatedSync(failing: true)
        let (durability, engine) = try makeDurability(every: 5)
        durability.syncCall = disk.sync
        #expect(try unsyncedTurn(durability, engine, count: 10, from: 1) == 10)
        disk.release.signal()
        // Posted to the loop's mailbox, not collected.
        var item = pollfd(fd: durability.syncOutcomes.fileDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&item, 1, 10_000) == 1)
        let cause = PersistenceError.io(operation: "fdatasync", path: directory.path + "/journal/segment-00000000000000000001.log", errno: EIO)
        let failed = PersistenceError.journalFailed(directory: directory.path, cause: cause)
        #expect(throws: failed) { try durability.commitNow() }
        #expect(durability.durableLSN == 0)
        #expect(durability.failure as? PersistenceError == failed)
        #expect(!durability.wantsFinalSnapshot)
        close(durability, engine)
        #expect(try TemporaryDirectory.list(directory.snapshots) == [], "neither the snapshot due at LSN 10 nor a final one")
    }

    /// The loop stops with actions the engine handled but never took from it (the turn threw
    /// mid-batch): a final snapshot would claim the journal's last LSN while holding them. None
    /// is written, and the next start has exactly what was journaled.
    @Test func noFinalSnapshotOfAStateWithActionsTheJournalDoesNotHave() throws {
        let (durability, engine) = try makeDurability(every: 1_000)
        try turn(durability, engine, count: 10, from: 1)
        let journaled = try checkpointBytes(engine)
        try handle(engine, count: 5, from: 11)
        close(durability, engine)
        #expect(try TemporaryDirectory.list(directory.snapshots) == [])
        let warnings = lines(containing: "no final snapshot: the state holds 5 record(s) the journal does not have")
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains(" WARN ") == true)

        let (reopened, recovered) = try makeDurability(every: 1_000)
        #expect(reopened.lastLSN == 10)
        #expect(recovered.currentMetrics().version == 10)
        #expect(try checkpointBytes(recovered) == journaled)
        close(reopened, recovered)
    }

    /// The same when the turn threw after taking its outbox and before appending its records
    /// (a prompt reply's send failed): the outbox the final snapshot is taken from is empty, but
    /// the state is ahead of the journal all the same.
    @Test func noFinalSnapshotAfterAnOutboxWhoseRecordsWereNeverAppended() throws {
        let (durability, engine) = try makeDurability(every: 1_000)
        try turn(durability, engine, count: 10, from: 1)
        try handle(engine, count: 3, from: 11)
        let lost = engine.takeOutbox(.init(checkpointAtRecords: durability.checkpointDemand(now: MonotonicClock.milliseconds())))
        #expect(lost.records.count == 3)
        close(durability, engine, unappended: lost.records.count)
        #expect(try TemporaryDirectory.list(directory.snapshots) == [])
        #expect(lines(containing: "no final snapshot: the state holds 3 record(s) the journal does not have").count == 1)
        let (reopened, recovered) = try makeDurability(every: 1_000)
        #expect(recovered.currentMetrics().version == 10)
        close(reopened, recovered)
    }

    /// Once the journal has everything, the final snapshot is written at its last LSN.
    @Test func theFinalSnapshotCoversExactlyTheJournal() throws {
        let (durability, engine) = try makeDurability(every: 1_000)
        try turn(durability, engine, count: 10, from: 1)
        close(durability, engine)
        let store = try SnapshotStore(directory: directory.path, app: "counter")
        let newest = try #require(try store.loadNewest())
        #expect(newest.lsn == 10)
        #expect(try MessagePackDecoder().decode(AuthorityCheckpoint<Counter>.self, from: newest.payload).sequencer.version == 10)
        #expect(lines(containing: "no final snapshot").isEmpty)
    }

    @Test func retryDelaysDoubleFromOneSecondUpToAMinute() {
        #expect((1...9).map { AuthorityDurability<Counter>.retryDelay(afterFailures: $0) }
                    == [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000])
    }
}
