import Glibc

/// The authority's append-only, checksummed log of events (accepted actions, emitted mutations,
/// finished and failed jobs), each an opaque payload numbered by a log sequence number (LSN).
///
/// Layout: `DIR/LOCK` (exclusive `flock`, holder's pid inside) and
/// `DIR/journal/segment-<first LSN, 20 digits>.log`. Each segment is a ``SegmentHeader``-style
/// header (magic `RBUSJRNL`, format version 1, app name) followed by records framed as
/// `length u32 LE | CRC32C u32 LE over LSN+payload | LSN u64 LE | payload`.
/// Segments rotate when the next record would take one past `segmentBytes`.
///
/// Writing is two-step: ``append(_:)`` only frames the record into a user-space buffer and
/// returns its LSN; ``commit()`` hands the buffer to `write(2)` and, unless the policy is
/// ``FsyncPolicy/none``, `fdatasync`s it. Acknowledge an action only after the commit that
/// covers its LSN returned. Group commit splits the second step: ``write()`` hands the buffer to
/// the kernel and returns a ``SyncRequest`` for a ``JournalSyncer`` thread; ``confirm(_:)`` takes
/// its outcome back. Either way ``committedLSN`` is what may be acknowledged.
///
/// Opening recovers: a torn tail is cut; other damage is refused unless the ``repair`` policy
/// allows cutting it. See ``recoveryReport`` and ``JournalRecoveryReport``.
///
/// Threads: not `Sendable`; one thread (the authority's loop) owns the journal.
/// Errors: every throwing method throws ``PersistenceError``. After a failed write or sync the
/// journal refuses further work (``PersistenceError/journalFailed(directory:cause:)``), because
/// after a failed `fsync` Linux may have dropped the dirty pages: reopen it to find out what is
/// really on disk. A sync that failed on a ``JournalSyncer`` fails the journal at once, before
/// its outcome reaches ``confirm(_:)``: see ``JournalSyncGate``.
package final class Journal {
    /// The data directory given at open.
    package let directory: String
    /// The app name written in and required from every segment header.
    package let app: String
    /// When commits sync.
    package let policy: FsyncPolicy
    /// Size at which segments rotate.
    package let segmentBytes: Int
    /// Largest payload ``append(_:)`` accepts.
    package let maxRecordBytes: Int
    /// What recovery found and repaired when this journal was opened.
    package let recoveryReport: JournalRecoveryReport
    /// What opening was allowed to do about damage other than a torn tail.
    package let repair: JournalRepairPolicy
    // The fields every append reads or changes are `@exclusivity(unchecked)`: a journal belongs
    // to one thread (it is not `Sendable`), and no access to one of them spans a call that
    // could reach the journal again (`RecordFrame.append` fills `pending` and returns); their
    // run-time checks were about 2% of a standby's samples, which appends every record.
    /// Counters since open.
    @exclusivity(unchecked) package private(set) var metrics = DurabilityMetrics()
    /// LSN of the last appended record, committed or not (0 for an empty log).
    @exclusivity(unchecked) package private(set) var lastLSN: UInt64
    /// LSN of the last record that reached `write(2)` and, per policy, the disk: what may be
    /// acknowledged.
    @exclusivity(unchecked) package private(set) var committedLSN: UInt64
    /// LSN of the oldest record still on disk (after compaction); `lastLSN + 1` if none.
    package var firstLSN: UInt64 { segments[0].firstLSN }

    /// `DIR/journal`.
    package let journalDirectory: String
    @exclusivity(unchecked) private(set) var segments: [JournalSegment]
    private var activeFD: Int32
    @exclusivity(unchecked) private var pending: [UInt8] = []
    @exclusivity(unchecked) private var pendingRecords: UInt64 = 0
    @exclusivity(unchecked) private var lock: DirectoryLock?
    @exclusivity(unchecked) private var failure: PersistenceError?
    /// The LSN the newest ``SyncRequest`` covers.
    private var requestedLSN: UInt64 = 0
    /// Every segment sync, this thread's and the syncer's, runs through it; a failed one fails
    /// the journal, wherever it ran.
    private let syncs = JournalSyncGate()

    /// An `fdatasync` for a ``JournalSyncer`` to run: a descriptor of its own for the segment
    /// being written (the syncer closes it), and the LSN that is durable once it returns.
    package struct SyncRequest: Sendable {
        package let fd: Int32
        package let path: String
        package let lsn: UInt64
        /// The journal's syncs: the syncer runs this one through it (``JournalSyncGate/run(path:_:)``).
        package let gate: JournalSyncGate
    }

    /// 64 MiB.
    package static let defaultSegmentBytes = 64 << 20
    /// 16 MiB.
    package static let defaultMaxRecordBytes = 16 << 20

    /// Opens the journal in `directory` (creating it if needed), takes the directory lock and
    /// recovers the log.
    ///
    /// - Parameters:
    ///   - directory: the data directory, shared with ``SnapshotStore``.
    ///   - app: the application name; 1 to 255 UTF-8 bytes. Segments of another app are refused.
    ///   - policy: when commits sync (default ``FsyncPolicy/batch``).
    ///   - segmentBytes: rotation size (default 64 MiB). A record larger than this gets a segment
    ///     of its own.
    ///   - maxRecordBytes: payload limit for ``append(_:)`` (default 16 MiB, at most `UInt32.max`).
    ///     Not applied to records already on disk.
    ///   - repair: what to do about damage other than a torn tail (default
    ///     ``JournalRepairPolicy/refuse``). A torn tail is always cut.
    /// - Throws: ``PersistenceError/journalDamaged(_:)`` for damage other than a torn tail under
    ///   ``JournalRepairPolicy/refuse`` (files left untouched, directory lock released);
    ///   ``PersistenceError/locked(directory:pid:)`` if another journal holds the directory; ``PersistenceError/unsupportedFormat(version:file:)``,
    ///   ``PersistenceError/appMismatch(expected:found:file:)`` or
    ///   ``PersistenceError/notAJournalSegment(file:)`` for foreign segments (left untouched);
    ///   ``PersistenceError/io(operation:path:errno:)``; ``PersistenceError/invalidConfiguration(_:)``.
    package init(
        directory: String, app: String, policy: FsyncPolicy = .default,
        segmentBytes: Int = Journal.defaultSegmentBytes, maxRecordBytes: Int = Journal.defaultMaxRecordBytes,
        repair: JournalRepairPolicy = .refuse
    ) throws {
        guard (1...SegmentHeader.maxAppBytes).contains(app.utf8.count) else {
            throw PersistenceError.invalidConfiguration("app name must be 1 to 255 UTF-8 bytes, got \(app.utf8.count)")
        }
        guard segmentBytes > 0 else {
            throw PersistenceError.invalidConfiguration("segmentBytes must be positive, got \(segmentBytes)")
        }
        guard (0...Int(UInt32.max)).contains(maxRecordBytes) else {
            throw PersistenceError.invalidConfiguration("maxRecordBytes must be 0...\(UInt32.max), got \(maxRecordBytes)")
        }
        let directory = PosixFile.normalize(directory)
        let journalDirectory = directory + "/journal"
        try PosixFile.makeDirectories(journalDirectory)
        let lock = try DirectoryLock(directory: directory)
        let outcome: JournalRecovery.Outcome
        let fd: Int32
        do {
            outcome = try JournalRecovery.run(directory: journalDirectory, app: app, repair: repair)
            if outcome.segments.isEmpty {
                let first = try JournalSegment.create(in: journalDirectory, firstLSN: 1, app: app, sync: policy.syncsOnCommit)
                segments = [first.segment]
                fd = first.fd
            } else {
                segments = outcome.segments
                fd = try PosixFile.open(outcome.segments[outcome.segments.count - 1].path, flags: O_WRONLY)
            }
        } catch {
            lock.release()
            throw error
        }
        self.directory = directory
        self.journalDirectory = journalDirectory
        self.app = app
        self.policy = policy
        self.segmentBytes = segmentBytes
        self.maxRecordBytes = maxRecordBytes
        self.repair = repair
        self.lock = lock
        activeFD = fd
        recoveryReport = outcome.report
        lastLSN = segments[segments.count - 1].lastLSN
        committedLSN = lastLSN
    }

    deinit {
        if activeFD >= 0 { PosixFile.close(activeFD) }
        lock?.release()
    }

    // MARK: Writing

    /// Frames `payload` into the write buffer and returns its LSN. Nothing reaches the kernel
    /// until ``commit()`` (except when the record starts a new segment: the old one is then
    /// written out and, per policy, synced first).
    ///
    /// - Throws: ``PersistenceError/recordTooLarge(size:limit:)`` (the journal stays usable);
    ///   rotation I/O errors; ``PersistenceError/closed(directory:)``.
    @discardableResult
    package func append(contentsOf payload: UnsafeRawBufferPointer) throws -> UInt64 {
        try checkUsable()
        guard payload.count <= maxRecordBytes else {
            throw PersistenceError.recordTooLarge(size: payload.count, limit: maxRecordBytes)
        }
        // Read in place: a copy of the segment retained and released its path, per record.
        let active = segments.count - 1
        let frameSize = RecordFrame.headerSize + payload.count
        if segments[active].recordCount + pendingRecords > 0 && segments[active].size + pending.count + frameSize > segmentBytes {
            try rotate()
        }
        let lsn = lastLSN + 1
        RecordFrame.append(lsn: lsn, payload: payload, to: &pending)
        lastLSN = lsn
        pendingRecords += 1
        metrics.recordsAppended += 1
        return lsn
    }

    /// Frames `payload` into the write buffer and returns its LSN; see ``append(contentsOf:)``.
    @discardableResult
    package func append(_ payload: [UInt8]) throws -> UInt64 {
        try payload.withUnsafeBytes { try append(contentsOf: $0) }
    }

    /// Writes buffered records with `write(2)` and, unless the policy is ``FsyncPolicy/none``,
    /// `fdatasync`s them. When it returns, every LSN up to ``lastLSN`` may be acknowledged.
    /// Does nothing when every record is committed already.
    ///
    /// - Throws: ``PersistenceError/io(operation:path:errno:)``; afterwards the journal is failed.
    package func commit() throws {
        try checkUsable()
        guard lastLSN > committedLSN else { return }
        try writePending()
        if policy.syncsOnCommit {
            try sync(activeFD, path: segments[segments.count - 1].path)
        }
        metrics.commits += 1
        committedLSN = lastLSN
    }

    /// The first half of a group commit: writes buffered records with `write(2)` and, when the
    /// policy syncs, returns the `fdatasync` that makes them durable, to run off this thread
    /// (``JournalSyncer``); ``committedLSN`` moves when ``confirm(_:)`` gets its outcome. Under
    /// ``FsyncPolicy/none`` the records are committed at once and the result is `nil`; it is also
    /// `nil` when nothing was written since the last request, which then covers everything.
    ///
    /// - Throws: ``PersistenceError/io(operation:path:errno:)``; afterwards the journal is failed.
    package func write() throws -> SyncRequest? {
        try checkUsable()
        try writePending()
        guard lastLSN > committedLSN else { return nil }
        guard policy.syncsOnCommit else {
            metrics.commits += 1
            committedLSN = lastLSN
            return nil
        }
        guard lastLSN > requestedLSN else { return nil }
        let path = segments[segments.count - 1].path
        let fd = try failing { try PosixFile.duplicate(activeFD, path: path) }
        requestedLSN = lastLSN
        return SyncRequest(fd: fd, path: path, lsn: lastLSN, gate: syncs)
    }

    /// The second half of a group commit: a ``JournalSyncer`` outcome. On success every record
    /// through its LSN is committed; a failed sync fails the journal (after a failed `fsync`
    /// Linux may have dropped the dirty pages).
    ///
    /// - Throws: ``PersistenceError/journalFailed(directory:cause:)`` for a failed sync.
    package func confirm(_ outcome: JournalSyncer.Outcome) throws {
        switch outcome {
        case .synced(let lsn, let elapsed):
            metrics.fsyncs += 1
            metrics.fsyncTime += elapsed
            metrics.commits += 1
            committedLSN = max(committedLSN, min(lsn, lastLSN))
        case .syncFailed(_, let error):
            if failure == nil { failure = error }
            throw PersistenceError.journalFailed(directory: directory, cause: error)
        case .removed:
            break
        }
    }

    /// Commits buffered records, then releases the segment and the directory lock. Later calls
    /// throw ``PersistenceError/closed(directory:)``; closing twice is harmless. A journal dropped
    /// without `close()` releases its lock but does not commit. A failed journal (here or on a
    /// ``JournalSyncer``) closes without committing.
    package func close() throws {
        guard let lock else { return }
        defer {
            PosixFile.close(activeFD)
            activeFD = -1
            lock.release()
            self.lock = nil
        }
        takeSyncFailure()
        if failure == nil { try commit() }
    }

    // MARK: Compaction

    /// Deletes whole segments whose every record has an LSN `<= lsn`, oldest first; the segment
    /// being written is always kept. Call it with an LSN covered by a snapshot that has a
    /// fallback (see ``SnapshotWriteResult/compactableThrough``).
    ///
    /// - Returns: the deleted segment paths.
    @discardableResult
    package func compact(through lsn: UInt64) throws -> [String] {
        try checkUsable()
        var removed: [String] = []
        while segments.count > 1 && segments[0].lastLSN <= lsn {
            try PosixFile.remove(segments[0].path)
            removed.append(segments[0].path)
            segments.removeFirst()
        }
        if !removed.isEmpty && policy.syncsOnCommit {
            try sync(directory: journalDirectory)
        }
        return removed
    }

    /// Compaction without the disk work, for a ``JournalSyncer`` to finish: forgets the whole
    /// segments ``compact(through:)`` would delete and returns their paths, for
    /// ``JournalSyncer/remove(_:in:)`` (with ``journalDirectory``). Until they are gone the files
    /// are harmless: a reopened journal reads them as older records the snapshot covers.
    package func detachSegments(through lsn: UInt64) throws -> [String] {
        try checkUsable()
        var detached: [String] = []
        while segments.count > 1 && segments[0].lastLSN <= lsn {
            detached.append(segments[0].path)
            segments.removeFirst()
        }
        return detached
    }

    /// Continues the log after `lsn`, past its last record: for a journal whose end was lost (cut
    /// by a repair, or never synced under ``FsyncPolicy/none``) while a snapshot covers through
    /// `lsn`. Every segment is renamed `<name>.corrupt` (their records are all covered by that
    /// snapshot) and an empty segment starting at `lsn + 1` is created, so new records never
    /// reuse an LSN the snapshot covers. Does nothing if `lsn <= lastLSN`.
    ///
    /// - Returns: the renamed segments (new paths), oldest first.
    /// - Throws: ``PersistenceError/io(operation:path:errno:)``; afterwards the journal is failed.
    @discardableResult
    package func continueAfter(_ lsn: UInt64) throws -> [String] {
        try checkUsable()
        guard lsn > lastLSN else { return [] }
        try writePending()
        var moved: [String] = []
        try failing {
            for segment in segments {
                let target = PosixFile.freshPath(segment.path + ".corrupt")
                try PosixFile.rename(segment.path, to: target)
                moved.append(target)
            }
            try PosixFile.syncDirectory(journalDirectory)
        }
        let next = try failing {
            try JournalSegment.create(in: journalDirectory, firstLSN: lsn + 1, app: app, sync: true)
        }
        PosixFile.close(activeFD)
        activeFD = next.fd
        segments = [next.segment]
        lastLSN = lsn
        committedLSN = lsn
        return moved
    }

    // MARK: Reading

    /// A reader over the records with LSN `> lsn` that reached `write(2)` (by ``commit()``, or
    /// by a segment rotation), in order, checked again as read. Records still in the write
    /// buffer are not included.
    ///
    /// - Throws: ``PersistenceError/journalGap(requestedAfter:oldestAvailable:directory:)`` if
    ///   records after `lsn` were compacted away.
    package func reader(after lsn: UInt64) throws -> JournalReader {
        try checkUsable()
        if lsn < firstLSN - 1 {
            throw PersistenceError.journalGap(requestedAfter: lsn, oldestAvailable: firstLSN, directory: directory)
        }
        return JournalReader(segments: segments.filter { $0.recordCount > 0 && $0.lastLSN > lsn }, after: lsn)
    }

    /// All committed records with LSN `> lsn`, in order (the whole tail in memory; use
    /// ``reader(after:)`` to stream a long one).
    package func records(after lsn: UInt64) throws -> [JournalRecord] {
        var reader = try reader(after: lsn)
        var records: [JournalRecord] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    // MARK: Internals

    private func checkUsable() throws {
        takeSyncFailure()
        if let failure { throw PersistenceError.journalFailed(directory: directory, cause: failure) }
        if lock == nil { throw PersistenceError.closed(directory: directory) }
    }

    /// A sync that failed on the syncer fails the journal now, not once its outcome is confirmed:
    /// meanwhile no commit or rotation may call anything written before it durable.
    private func takeSyncFailure() {
        if failure == nil, syncs.hasFailed { failure = syncs.failure }
    }

    /// Runs `body`; a failure marks the journal failed.
    private func failing<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PersistenceError {
            failure = error
            throw error
        }
    }

    private func writePending() throws {
        guard pendingRecords > 0 else { return }
        let index = segments.count - 1
        let path = segments[index].path
        let offset = segments[index].size
        try failing {
            try pending.withUnsafeBytes { try PosixFile.write(activeFD, $0, at: offset, path: path) }
        }
        segments[index].size += pending.count
        segments[index].recordCount += pendingRecords
        metrics.bytesWritten += UInt64(pending.count)
        pending.removeAll(keepingCapacity: true)
        pendingRecords = 0
    }

    private func sync(_ fd: Int32, path: String) throws {
        let start = ContinuousClock.now
        try failing { try syncs.run(path: path) { try PosixFile.sync(fd, path: path) } }
        metrics.fsyncs += 1
        metrics.fsyncTime += ContinuousClock.now - start
    }

    private func sync(directory: String) throws {
        let start = ContinuousClock.now
        try failing { try PosixFile.syncDirectory(directory) }
        metrics.fsyncs += 1
        metrics.fsyncTime += ContinuousClock.now - start
    }

    /// Finishes the active segment (written and, per policy, synced) and starts the next one.
    private func rotate() throws {
        try writePending()
        if policy.syncsOnCommit {
            try sync(activeFD, path: segments[segments.count - 1].path)
        }
        // Everything so far is written and, per policy, on disk.
        committedLSN = lastLSN
        let next = try failing {
            try JournalSegment.create(in: journalDirectory, firstLSN: lastLSN + 1, app: app, sync: false)
        }
        if policy.syncsOnCommit {
            try sync(next.fd, path: next.segment.path)
            try sync(directory: journalDirectory)
        }
        PosixFile.close(activeFD)
        activeFD = next.fd
        segments.append(next.segment)
    }
}

/// One thread owns a journal; the compiler enforces it.
@available(*, unavailable)
extension Journal: Sendable {}
