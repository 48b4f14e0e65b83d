import Dispatch
import Glibc
@testable import ReactorStorage
import Synchronization
import Testing

extension PersistenceTests {
    /// The journal's group commit: ``Journal/write()`` hands the `fdatasync` to a
    /// ``JournalSyncer`` thread and ``Journal/confirm(_:)`` takes its outcome back.
    @Suite struct GroupCommitTests {
        /// Outcomes delivered by a syncer, with a bounded wait for the next.
        final class Outcomes: Sendable {
            private let received = Mutex<[JournalSyncer.Outcome]>([])
            private let arrived = DispatchSemaphore(value: 0)
            func deliver(_ outcome: JournalSyncer.Outcome) {
                received.withLock { $0.append(outcome) }
                arrived.signal()
            }
            /// Waits (at most 10 s) until `count` outcomes arrived; returns them all.
            func wait(for count: Int) -> [JournalSyncer.Outcome] {
                while received.withLock({ $0.count }) < count {
                    if arrived.wait(timeout: .now() + 10) == .timedOut { break }
                }
                return received.withLock { $0 }
            }
        }

        /// A disk whose syncs wait for the test (the first `gated` of them), can fail, and
        /// record the descriptors they were given.
        final class GatedDisk: Sendable {
            let started = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let gated: Int
            let failing: Bool
            let descriptors = Mutex<[Int32]>([])
            init(gated: Int = 0, failing: Bool = false) {
                self.gated = gated
                self.failing = failing
            }
            func sync(_ fd: Int32, _ path: String) throws {
                let index = descriptors.withLock { $0.append(fd); return $0.count }
                if index <= gated {
                    started.signal()
                    _ = release.wait(timeout: .now() + 10)
                }
                if failing { throw PersistenceError.io(operation: "fdatasync", path: path, errno: EIO) }
                guard fdatasync(fd) == 0 else { throw PersistenceError.io(operation: "fdatasync", path: path, errno: errno) }
            }
        }

        /// Whether `fd` is (still) a descriptor of the file at `path`. Other tests running in
        /// parallel may reuse a closed descriptor's number, but not for this test's file.
        static func isOpen(_ fd: Int32, on path: String) -> Bool {
            var open = stat()
            var file = stat()
            guard fstat(fd, &open) == 0, stat(path, &file) == 0 else { return false }
            return open.st_ino == file.st_ino && open.st_dev == file.st_dev
        }

        @Test func writeHandsTheSyncOffAndOnlyTheConfirmCommits() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app)
            for n in 1...3 { try journal.append(Disk.payload(n, length: 10)) }
            let request = try #require(try journal.write())
            #expect(request.lsn == 3)
            #expect(request.path.hasSuffix("segment-00000000000000000001.log"))
            // Written to the kernel (readable), not yet committed.
            #expect(journal.committedLSN == 0)
            #expect(try journal.records(after: 0).map(\.lsn) == [1, 2, 3])
            // Nothing new written: the request in flight covers it.
            #expect(try journal.write() == nil)

            let outcomes = Outcomes()
            let syncer = JournalSyncer(name: "test-sync", deliver: outcomes.deliver)
            defer { syncer.stop() }
            syncer.submit(request)
            let delivered = outcomes.wait(for: 1)
            #expect(delivered.map(\.lsn) == [3])
            #expect(delivered.map(\.failed) == [false])
            try journal.confirm(delivered[0])
            #expect(journal.committedLSN == 3)
            #expect(journal.metrics.fsyncs == 1)
            #expect(journal.metrics.commits == 1)
            #expect(!Self.isOpen(request.fd, on: request.path), "the syncer closes the descriptor it was given")
        }

        @Test func underTheNonePolicyWriteCommitsAtOnce() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app, policy: .none)
            try journal.append(Disk.payload(1, length: 10))
            #expect(try journal.write() == nil)
            #expect(journal.committedLSN == 1)
            #expect(journal.metrics.fsyncs == 0)
        }

        @Test func commitAlsoSyncsWhatAnEarlierWriteLeftUnsynced() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app)
            try journal.append(Disk.payload(1, length: 10))
            let request = try #require(try journal.write())
            defer { close(request.fd) }
            try journal.commit()
            #expect(journal.committedLSN == 1)
            #expect(journal.metrics.fsyncs == 1)
        }

        @Test func aRotationCommitsEverythingBeforeTheNewSegment() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app, segmentBytes: 256)
            for n in 1...3 { try journal.append(Disk.payload(n, length: 40)) }
            let request = try #require(try journal.write())
            defer { close(request.fd) }
            #expect(journal.committedLSN == 0)
            // The next records do not fit: the finished segment is synced before the next starts.
            for n in 4...8 { try journal.append(Disk.payload(n, length: 40)) }
            #expect(try Disk.list(dir.journal).count == 2)
            #expect(journal.committedLSN == 4)
            let next = try #require(try journal.write())
            defer { close(next.fd) }
            #expect(next.lsn == 8)
            #expect(next.path.hasSuffix("segment-00000000000000000005.log"))
        }

        @Test func aFailedSyncFailsTheJournal() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app)
            try journal.append(Disk.payload(1, length: 10))
            let request = try #require(try journal.write())
            close(request.fd)
            let failure = PersistenceError.io(operation: "fdatasync", path: request.path, errno: EIO)
            #expect(throws: PersistenceError.journalFailed(directory: journal.directory, cause: failure)) {
                try journal.confirm(.syncFailed(lsn: 1, failure))
            }
            #expect(journal.committedLSN == 0)
            #expect(throws: PersistenceError.journalFailed(directory: journal.directory, cause: failure)) {
                try journal.append(Disk.payload(2, length: 10))
            }
        }

        /// The syncer's `fdatasync` failed and the journal has not confirmed the outcome yet: a
        /// rotation's own sync of the same file would succeed (Linux reports the error once per
        /// open file, and the syncer's descriptor shares the journal's), so the journal must be
        /// failed already and commit nothing.
        @Test func aSyncThatFailedOnTheSyncerFailsTheJournalBeforeAnyRotationOrCommit() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app, segmentBytes: 256)
            let outcomes = Outcomes()
            let syncer = JournalSyncer(name: "test-sync", sync: GatedDisk(failing: true).sync, deliver: outcomes.deliver)
            defer { syncer.stop() }
            for n in 1...4 { try journal.append(Disk.payload(n, length: 40)) }
            let request = try #require(try journal.write())
            syncer.submit(request)
            let cause = PersistenceError.io(operation: "fdatasync", path: dir.segment(1), errno: EIO)
            #expect(outcomes.wait(for: 1) == [.syncFailed(lsn: 4, cause)])
            // The next record does not fit: appending it would rotate, syncing segment 1 again.
            let failed = PersistenceError.journalFailed(directory: journal.directory, cause: cause)
            #expect(throws: failed) { try journal.append(Disk.payload(5, length: 40)) }
            #expect(throws: failed) { try journal.commit() }
            #expect(journal.committedLSN == 0)
            #expect(journal.lastLSN == 4)
            #expect(try Disk.list(dir.journal) == [JournalSegment.fileName(firstLSN: 1)])
            // Closing commits nothing either; the outcome, confirmed late, fails it the same way.
            #expect(throws: failed) { try journal.confirm(.syncFailed(lsn: 4, cause)) }
            try journal.close()
            #expect(journal.committedLSN == 0)
        }

        @Test func requestsThatArriveDuringASyncAreCoalescedIntoOne() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app)
            let disk = GatedDisk(gated: 1)
            let outcomes = Outcomes()
            let syncer = JournalSyncer(name: "test-sync", sync: disk.sync, deliver: outcomes.deliver)
            defer { syncer.stop() }
            var requests: [Journal.SyncRequest] = []
            for n in 1...4 {
                try journal.append(Disk.payload(n, length: 10))
                let request = try #require(try journal.write())
                requests.append(request)
                syncer.submit(request)
                if n == 1 { #expect(disk.started.wait(timeout: .now() + 10) == .success) }
            }
            disk.release.signal()
            let delivered = outcomes.wait(for: 2)
            // The first sync, then one for the newest request: the two between were dropped.
            #expect(delivered.map(\.lsn) == [1, 4])
            #expect(disk.descriptors.withLock { $0 } == [requests[0].fd, requests[3].fd])
            for outcome in delivered { try journal.confirm(outcome) }
            #expect(journal.committedLSN == 4)
            #expect(requests.allSatisfy { !Self.isOpen($0.fd, on: $0.path) }, "every descriptor is closed, synced or dropped")
        }

        @Test func afterAFailedSyncLaterRequestsAreDroppedAndClosed() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app)
            let disk = GatedDisk(gated: 1, failing: true)
            let outcomes = Outcomes()
            let syncer = JournalSyncer(name: "test-sync", sync: disk.sync, deliver: outcomes.deliver)
            defer { syncer.stop() }
            try journal.append(Disk.payload(1, length: 10))
            let first = try #require(try journal.write())
            syncer.submit(first)
            #expect(disk.started.wait(timeout: .now() + 10) == .success)
            disk.release.signal()
            #expect(outcomes.wait(for: 1).map(\.lsn) == [1])
            // The failed journal takes nothing more (see JournalSyncGate); a request of another
            // journal stands for one that came before the failure was known.
            #expect(throws: PersistenceError.self) { try journal.append(Disk.payload(2, length: 10)) }
            let otherDir = try TemporaryDirectory()
            let other = try Journal(directory: otherDir.path, app: Disk.app)
            try other.append(Disk.payload(2, length: 10))
            let second = try #require(try other.write())
            syncer.submit(second)
            #expect(!Self.isOpen(second.fd, on: second.path))
            syncer.stop()
            #expect(outcomes.wait(for: 1) == [.syncFailed(lsn: 1, .io(operation: "fdatasync", path: first.path, errno: EIO))])
        }

        @Test func detachedSegmentsAreDeletedByTheSyncerAndTheJournalGoesOn() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app, segmentBytes: 256)
            for n in 1...12 { try journal.append(Disk.payload(n, length: 40)) }
            try journal.commit()
            let segments = try Disk.list(dir.journal)
            #expect(segments.count == 3)
            let detached = try journal.detachSegments(through: 8)
            #expect(detached == segments.prefix(2).map { dir.journal + "/" + $0 })
            #expect(journal.firstLSN == 9)
            // The files are still there until the syncer deletes them.
            #expect(try Disk.list(dir.journal).count == 3)
            let outcomes = Outcomes()
            let syncer = JournalSyncer(name: "test-sync", deliver: outcomes.deliver)
            defer { syncer.stop() }
            syncer.remove(detached, in: journal.journalDirectory)
            #expect(outcomes.wait(for: 1) == [.removed(detached, nil)])
            #expect(try Disk.list(dir.journal) == [segments[2]])
            #expect(try journal.records(after: 8).map(\.lsn) == [9, 10, 11, 12])
            try journal.confirm(.removed(detached, nil))
            #expect(journal.committedLSN == 12)
        }

        /// `count` segments of 4 records each (40-byte payloads, 256-byte segments), committed.
        static func segmentedJournal(in dir: TemporaryDirectory, policy: FsyncPolicy, segments count: Int) throws -> Journal {
            let journal = try Journal(directory: dir.path, app: Disk.app, policy: policy, segmentBytes: 256)
            for n in 1...(count * 4) { try journal.append(Disk.payload(n, length: 40)) }
            try journal.commit()
            #expect(try Disk.list(dir.journal) == (0..<count).map { JournalSegment.fileName(firstLSN: UInt64($0 * 4 + 1)) })
            return journal
        }

        /// Puts a directory where the segment file `path` was, so that unlinking it fails
        /// (`EISDIR`); the returned closure puts the file back.
        static func blockRemoval(of path: String) -> () -> Void {
            let aside = path + ".aside"
            #expect(rename(path, aside) == 0)
            #expect(mkdir(path, 0o700) == 0)
            return {
                #expect(rmdir(path) == 0)
                #expect(rename(aside, path) == 0)
            }
        }

        /// A compacted segment's deletion fails: it and every later one stay (oldest first),
        /// and the next removal request deletes them, in order, before its own. The files left
        /// meanwhile are always the oldest segments, never a gap a reopened journal would refuse.
        @Test func aFailedDeletionHoldsBackEveryLaterOneUntilTheNextRemovalRequest() throws {
            let dir = try TemporaryDirectory()
            var journal: Journal? = try Self.segmentedJournal(in: dir, policy: .none, segments: 10)
            let names = (0..<10).map { JournalSegment.fileName(firstLSN: UInt64($0 * 4 + 1)) }
            let segments = names.map { dir.journal + "/" + $0 }
            let outcomes = Outcomes()
            let syncer = JournalSyncer(name: "test-sync", deliver: outcomes.deliver)
            defer { syncer.stop() }
            let first = try #require(journal).detachSegments(through: 12)
            #expect(first == Array(segments[0..<3]))
            let restore = Self.blockRemoval(of: segments[1])
            syncer.remove(first, in: dir.journal)
            #expect(outcomes.wait(for: 1) == [.removed([segments[0]], .io(operation: "unlink", path: segments[1], errno: EISDIR))])
            restore()
            #expect(try Disk.list(dir.journal) == Array(names[1...]))

            let second = try #require(journal).detachSegments(through: 30)
            #expect(second == Array(segments[3..<7]))
            syncer.remove(second, in: dir.journal)
            #expect(outcomes.wait(for: 2).last == .removed(Array(segments[1..<7]), nil))
            #expect(try Disk.list(dir.journal) == Array(names[7...]))

            try journal?.close()
            journal = nil
            let reopened = try Journal(directory: dir.path, app: Disk.app, policy: .none, segmentBytes: 256)
            #expect(reopened.firstLSN == 29)
            #expect(try reopened.records(after: 28).map(\.lsn) == Array(29...40))
        }

        /// Deletions held back by a failed one are also tried again after the next sync, even
        /// with no further compaction.
        @Test func deletionsHeldBackByAFailedOneAreRetriedAfterTheNextSync() throws {
            let dir = try TemporaryDirectory()
            let journal = try Self.segmentedJournal(in: dir, policy: .batch, segments: 3)
            let outcomes = Outcomes()
            let syncer = JournalSyncer(name: "test-sync", deliver: outcomes.deliver)
            defer { syncer.stop() }
            let detached = try journal.detachSegments(through: 8)
            #expect(detached == [dir.segment(1), dir.segment(5)])
            let restore = Self.blockRemoval(of: dir.segment(1))
            syncer.remove(detached, in: dir.journal)
            #expect(outcomes.wait(for: 1) == [.removed([], .io(operation: "unlink", path: dir.segment(1), errno: EISDIR))])
            restore()
            #expect(try Disk.list(dir.journal).count == 3)

            try journal.append(Disk.payload(13, length: 40))
            syncer.submit(try #require(try journal.write()))
            let delivered = outcomes.wait(for: 3)
            #expect(delivered.count == 3)
            #expect(delivered.dropFirst().first?.lsn == 13)
            #expect(delivered.last == .removed(detached, nil))
            #expect(try Disk.list(dir.journal) == [JournalSegment.fileName(firstLSN: 9), JournalSegment.fileName(firstLSN: 13)])
        }
    }
}

extension JournalSyncer.Outcome {
    var lsn: UInt64? {
        switch self {
        case .synced(let lsn, _), .syncFailed(let lsn, _): lsn
        case .removed: nil
        }
    }
    var failed: Bool {
        if case .syncFailed = self { true } else { false }
    }
}
