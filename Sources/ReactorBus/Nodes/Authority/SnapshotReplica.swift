import Foundation
import Glibc
import MessagePack
import ReactorCore
import ReactorLog
import ReactorStorage
import Synchronization
import SystemCalls
import ZeroMQ

/// A second copy of the authority's state, kept current on a thread of its own by replaying the
/// records the loop journals, from which the snapshots of a large state are written.
///
/// A checkpoint of the loop's own state shares its storage (Swift values are copy on write), and
/// the loop's next change then copies all of it: for a state of a million small values, a pause
/// of the loop of 100-200 ms per snapshot. A replica removes that pause: the loop sends it each
/// turn's journal records and, when a snapshot is due, a ``Mark`` (the LSN the snapshot covers,
/// and the version and action sequence the loop's state had there). The replica applies the
/// records in order as recovery does (``RecordReplayer``); at a mark it checks that its state
/// reached the same version and action sequence, waits until the LSN is durable in the journal
/// (a snapshot never gets ahead of the journal), and encodes and writes its own state, which no
/// other thread shares.
///
/// It starts from the snapshot recovered from (its bytes, decoded on its thread as recovery
/// decodes them) or from the checkpoint whose snapshot was just written large (``Seed``: the
/// loop copied away from that checkpoint at its first change after taking it, the one copy a
/// replica cannot spare), and the records journaled after it. A replica whose state disagrees
/// with a mark, or that cannot apply a record, stops (``Failure``), and the loop's checkpoints
/// take over again.
///
/// The loop also asks it for the state's encodings (``encodeState(at:deliver:)``), for the feed's
/// snapshots, fetches and whole `snapshot` replies: it encodes its own state at the mark and
/// hands the bytes back, so the loop neither encodes nor copies its state for them.
///
/// Its cost: every record's CPU a second time, on a thread at nice +10, and the state's memory a
/// second time. Worth it for large states only (``PersistenceConfiguration/replicaSnapshotsAbove``).
final class SnapshotReplica<R: Reactor>: Sendable {
    /// What the replica needs to build its own engine: the loop's reactor and configuration.
    struct Setup: Sendable {
        var reactor: R
        var configuration: AuthorityConfiguration
        var logger: Logger
    }

    /// Where a snapshot is due: the LSN it covers exactly and what the loop's state was there.
    struct Mark: Sendable {
        var lsn: UInt64
        var version: UInt64
        var actionSeq: UInt64
    }

    /// Carries a checkpoint from the snapshot writer's thread, once its snapshot was written
    /// large, to a replica: a smaller one is never kept, so its last reference goes on that
    /// thread (freeing a state takes time) and never on the loop's.
    final class Seed: Sendable {
        private let checkpoint = Mutex<AuthorityCheckpoint<R>?>(nil)

        /// Keeps `checkpoint` for ``take()`` (on the writer's thread).
        func keep(_ checkpoint: AuthorityCheckpoint<R>) {
            self.checkpoint.withLock { $0 = checkpoint }
        }

        /// The checkpoint kept, if any, moved out.
        func take() -> AuthorityCheckpoint<R>? {
            checkpoint.withLock { kept in
                defer { kept = nil }
                return kept
            }
        }
    }

    /// Why a replica stopped writing snapshots (nothing is lost: the journal has every record).
    enum Failure: Error, CustomStringConvertible {
        /// At the mark the replica had applied records through another LSN, or its state had
        /// another version or action sequence.
        case diverged(expected: Mark, lsn: UInt64, version: UInt64, actionSeq: UInt64)
        /// A record or the snapshot it started from did not apply.
        case notApplied(lsn: UInt64, any Error)
        /// The replica stopped before it came to the request.
        case stopped

        var description: String {
            switch self {
            case .diverged(let mark, let lsn, let version, let actionSeq):
                "the replica reached journal record \(lsn), version \(version), action \(actionSeq) where the loop's state was at record \(mark.lsn), version \(mark.version), action \(mark.actionSeq)"
            case .notApplied(let lsn, let error):
                "the replica could not apply journal record \(lsn): \(error)"
            case .stopped:
                "the replica stopped first"
            }
        }
    }

    private enum Item: Sendable {
        /// Start from a snapshot's bytes (decoded and migrated as recovery does) at `lsn`.
        case snapshotBytes([UInt8], lsn: UInt64)
        /// Start from a checkpoint of the loop's state at `lsn`; the records after it are of
        /// schema version `schema` (until one says otherwise).
        case checkpoint(AuthorityCheckpoint<R>, lsn: UInt64, schema: UInt32)
        /// Records to apply, with their payloads' bytes (counted once, when handed over).
        case records([JournalRecord], bytes: Int)
        case mark(Mark)
        /// Encode the state at the mark, and hand the outcome to `deliver`.
        case encode(Mark, deliver: @Sendable (StateEncode.Done) -> Void)

        /// Tells an encoding's requester that it will not come: the replica stopped first.
        func abandon() {
            guard case .encode(let mark, let deliver) = self else { return }
            deliver(StateEncode.Done(version: mark.version, actionSeq: mark.actionSeq, result: .failure(Failure.stopped)))
        }
    }

    private struct State: Sendable {
        var items: [Item] = []
        /// The journal is durable through this LSN: a mark at or below it may be written.
        var durable: UInt64 = 0
        var outcome: SnapshotWriter.Outcome?
        var stopping = false
        var finished = false
    }

    private let shared = ThreadHandoff(State())
    /// The bytes of the records handed over and not yet applied (outside the handoff's lock, so
    /// that reading it each turn wakes nobody).
    private let backlog = Atomic<Int>(0)
    /// Set by ``stop(waiting:)``: read between records without taking the lock, so that a stop
    /// does not wait for a long batch (the records recovered, a backlog) to be applied.
    private let stopRequested = Atomic<Bool>(false)

    /// Starts the replica's thread from a snapshot's `bytes` at `lsn`, then `records` (those after
    /// it). `makeDestination` runs on that thread, which alone writes to what it returns.
    convenience init(setup: Setup, snapshot bytes: [UInt8], lsn: UInt64, records: [JournalRecord],
                     makeDestination: @escaping @Sendable () throws -> any SnapshotDestination) {
        self.init(setup: setup, start: .snapshotBytes(bytes, lsn: lsn), records: records, makeDestination: makeDestination)
    }

    /// Starts the replica's thread from `checkpoint` (the loop's state at the journal's record
    /// `lsn`), then `records` (those after it, of schema version `schema` until one says otherwise).
    convenience init(setup: Setup, checkpoint: AuthorityCheckpoint<R>, lsn: UInt64, schema: UInt32, records: [JournalRecord],
                     makeDestination: @escaping @Sendable () throws -> any SnapshotDestination) {
        self.init(setup: setup, start: .checkpoint(checkpoint, lsn: lsn, schema: schema), records: records, makeDestination: makeDestination)
    }

    private init(setup: Setup, start: Item, records: [JournalRecord], makeDestination: @escaping @Sendable () throws -> any SnapshotDestination) {
        let bytes = Self.bytes(of: records)
        backlog.store(bytes, ordering: .relaxed)
        shared.locked { $0.items = [start, .records(records, bytes: bytes)] }
        let thread = Thread { [self] in
            ThreadName.setCurrent("snapshot-replica")
            // On Linux the nice value is per thread, and `who` 0 is the calling thread.
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            var follower = Follower(setup: setup)
            var destination: (any SnapshotDestination)?
            while var items = nextItems() {
                for index in items.indices {
                    if stopRequested.load(ordering: .relaxed) {
                        items[index].abandon()
                        continue
                    }
                    // Taken out of the batch: a starting checkpoint kept there would make the
                    // first record applied copy the whole state.
                    let item = items[index]
                    items[index] = .records([], bytes: 0)
                    switch item {
                    case .snapshotBytes(let bytes, let lsn): follower.start(from: bytes, lsn: lsn)
                    case .checkpoint(let checkpoint, let lsn, let schema): follower.start(from: checkpoint, lsn: lsn, schema: schema)
                    case .records(let records, let bytes):
                        follower.apply(records, unless: stopRequested)
                        self.backlog.subtract(bytes, ordering: .relaxed)
                    case .mark(let mark):
                        guard waitUntilDurable(mark.lsn) else { break }
                        let outcome = follower.snapshot(at: mark, on: &destination, making: makeDestination)
                        shared.locked { $0.outcome = outcome }
                    case .encode(let mark, let deliver):
                        deliver(follower.encodeState(at: mark))
                    }
                }
            }
            shared.locked { $0.finished = true }
        }
        thread.name = "snapshot-replica"
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Hands a turn's journal records over, in LSN order, following those handed before.
    func apply(_ records: [JournalRecord]) {
        guard !records.isEmpty else { return }
        let bytes = Self.bytes(of: records)
        backlog.add(bytes, ordering: .relaxed)
        shared.locked { $0.items.append(.records(records, bytes: bytes)) }
    }

    /// Asks for a snapshot at `mark`, written once the journal is durable through its LSN
    /// (``durable(through:)``). One at a time: the loop waits for its outcome first.
    func snapshot(at mark: Mark) {
        shared.locked { $0.items.append(.mark(mark)) }
    }

    /// Asks for the state encoded at `mark` (the LSN just journaled, and the loop's version and
    /// action sequence there), for the feed or requests; `deliver` gets the outcome on the replica's thread,
    /// or a failure if the replica stops first. It does not wait for the journal to be durable:
    /// the loop publishes the bytes once it is.
    func encodeState(at mark: Mark, deliver: @escaping @Sendable (StateEncode.Done) -> Void) {
        let item = Item.encode(mark, deliver: deliver)
        let queued = shared.locked { state -> Bool in
            guard !state.stopping else { return false }
            state.items.append(item)
            return true
        }
        if !queued { item.abandon() }
    }

    /// The journal is durable through `lsn`.
    func durable(through lsn: UInt64) {
        shared.locked { $0.durable = max($0.durable, lsn) }
    }

    /// The bytes of the records handed over and not yet applied: what the replica's backlog holds
    /// in memory.
    var backlogBytes: Int { backlog.load(ordering: .relaxed) }

    private static func bytes(of records: [JournalRecord]) -> Int {
        records.reduce(0) { $0 + $1.payload.count }
    }

    /// The outcome of the snapshot asked for, once written (or failed); never blocks.
    func takeOutcome() -> SnapshotWriter.Outcome? {
        shared.locked { state in
            defer { state.outcome = nil }
            return state.outcome
        }
    }

    /// Waits for the outcome of the snapshot asked for; `nil` when the replica stopped first.
    func waitForOutcome() -> SnapshotWriter.Outcome? {
        shared.wait { state -> SnapshotWriter.Outcome?? in
            if let outcome = state.outcome {
                state.outcome = nil
                return .some(outcome)
            }
            return state.finished ? .some(nil) : nil
        }
    }

    /// Drops what was not applied yet and ends the thread; with `waiting`, returns once it has
    /// ended (it finishes the record, or the snapshot, in hand first). Idempotent.
    func stop(waiting: Bool = true) {
        stopRequested.store(true, ordering: .relaxed)
        let dropped = shared.locked { state in
            state.stopping = true
            defer { state.items = [] }
            return state.items
        }
        for item in dropped { item.abandon() }
        if waiting { shared.wait { $0.finished ? () : nil } }
    }

    /// Blocks the thread until there are items (taking them all) or the replica stops (`nil`).
    private func nextItems() -> [Item]? {
        shared.wait { state -> [Item]?? in
            if state.stopping { return .some(nil) }
            guard !state.items.isEmpty else { return nil }
            defer { state.items = [] }
            return .some(state.items)
        }
    }

    /// Blocks the thread until the journal is durable through `lsn`; `false` when stopping first.
    private func waitUntilDurable(_ lsn: UInt64) -> Bool {
        shared.wait { state -> Bool? in
            if state.stopping { return false }
            return state.durable >= lsn ? true : nil
        }
    }
}

extension SnapshotReplica {
    /// The replica's engine and replayer, owned by its thread alone.
    private struct Follower {
        let setup: Setup
        let engine: AuthorityEngine<R>
        var replayer: RecordReplayer<R>
        /// The LSN of the last record applied.
        var lsn: UInt64 = 0
        /// Why the replica stopped applying, if it did: every mark then fails with it.
        var failure: Failure?

        init(setup: Setup) {
            self.setup = setup
            let configuration = setup.configuration
            engine = AuthorityEngine(reactor: setup.reactor, configuration: configuration, logger: setup.logger, journaling: true)
            replayer = RecordReplayer(schema: configuration.schema, app: configuration.appName, stored: configuration.schema.version)
        }

        mutating func start(from bytes: [UInt8], lsn: UInt64) {
            let configuration = setup.configuration
            do {
                let migrator = SchemaMigrator<R>(schema: configuration.schema, app: configuration.appName)
                let (checkpoint, stored) = try migrator.load(bytes, file: "the snapshot at journal record \(lsn)")
                engine.restore(checkpoint)
                replayer = RecordReplayer(schema: configuration.schema, app: configuration.appName, stored: stored)
                self.lsn = lsn
            } catch {
                failure = .notApplied(lsn: lsn, error)
            }
        }

        mutating func start(from checkpoint: AuthorityCheckpoint<R>, lsn: UInt64, schema: UInt32) {
            engine.restore(checkpoint)
            let configuration = setup.configuration
            replayer = RecordReplayer(schema: configuration.schema, app: configuration.appName, stored: schema)
            self.lsn = lsn
        }

        /// Applies `records` in order, until one fails or `stop` is set.
        mutating func apply(_ records: [JournalRecord], unless stop: borrowing Atomic<Bool>) {
            guard failure == nil else { return }
            for record in records {
                if stop.load(ordering: .relaxed) { return }
                do {
                    try replayer.replay(record, into: engine)
                    lsn = record.lsn
                } catch {
                    failure = .notApplied(lsn: record.lsn, error)
                    return
                }
            }
        }

        /// Encodes and writes the state at `mark`, or fails without writing.
        func snapshot(at mark: Mark, on destination: inout (any SnapshotDestination)?,
                      making makeDestination: () throws -> any SnapshotDestination) -> SnapshotWriter.Outcome {
            if let failure = failure(at: mark) { return Self.failed(mark, failure) }
            // The checkpoint lives only as long as the request: the next record applied finds the
            // state unshared again and changes it in place.
            let checkpoint = engine.checkpoint()
            let request = SnapshotWriter.Request(lsn: mark.lsn, version: mark.version) { write in
                try AuthorityDurability<R>.encode(checkpoint, write)
            }
            return SnapshotWriter.perform(request, on: &destination, making: makeDestination)
        }

        /// Encodes the state at `mark`, or fails without bytes.
        func encodeState(at mark: Mark) -> StateEncode.Done {
            let start = MonotonicClock.nanoseconds()
            let result: Result<EncodedBytes, any Error> = if let failure = failure(at: mark) { .failure(failure) } else { Result { try engine.encodeState() } }
            return StateEncode.Done(version: mark.version, actionSeq: mark.actionSeq, result: result, nanoseconds: MonotonicClock.nanoseconds() - start)
        }

        /// Why the replica cannot answer for `mark`: it stopped applying records, or its state is
        /// not exactly at the mark's LSN, version and action sequence. `nil`: it is.
        private func failure(at mark: Mark) -> Failure? {
            if let failure { return failure }
            let (version, actionSeq) = engine.inSequencer { ($0.version, $0.actionSeq) }
            guard lsn == mark.lsn, version == mark.version, actionSeq == mark.actionSeq else {
                return .diverged(expected: mark, lsn: lsn, version: version, actionSeq: actionSeq)
            }
            return nil
        }

        private static func failed(_ mark: Mark, _ failure: Failure) -> SnapshotWriter.Outcome {
            SnapshotWriter.Outcome(lsn: mark.lsn, version: mark.version, result: .failure(failure), elapsed: .zero)
        }
    }
}
