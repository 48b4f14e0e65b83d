@testable import ReactorStorage
import Testing

extension PersistenceTests {
    @Suite struct SnapshotStoreTests {
        @Test func writeThenLoadNewest() throws {
            let dir = try TemporaryDirectory()
            let store = try SnapshotStore(directory: dir.path, app: Disk.app)
            #expect(try store.loadNewest() == nil)
            let payload = Disk.payload(7, length: 1000)
            let result = try store.write(payload, coveringThrough: 42)
            #expect(result == SnapshotWriteResult(
                file: dir.snapshots + "/snapshot-00000000000000000042.snap", retained: [42], deleted: [], compactableThrough: 0))
            #expect(try store.loadNewest() == LoadedSnapshot(lsn: 42, payload: payload, file: result.file, rejected: []))
            #expect(try Disk.list(dir.snapshots) == ["snapshot-00000000000000000042.snap"])
        }

        @Test func exactByteLayout() throws {
            let dir = try TemporaryDirectory()
            let store = try SnapshotStore(directory: dir.path, app: Disk.app)
            let result = try store.write([0xAA, 0xBB], coveringThrough: 5)
            var header = Array("RBUSSNAP".utf8) + [1, 0, 0, 0] + [8, 0] + Array("test-app".utf8)
            header += [5, 0, 0, 0, 0, 0, 0, 0] + [2, 0, 0, 0, 0, 0, 0, 0]
            let crc = CRC32C.checksum(header + [0xAA, 0xBB])
            let expected = header + withUnsafeBytes(of: crc.littleEndian) { Array($0) } + [0xAA, 0xBB]
            #expect(try Disk.read(result.file) == expected)
        }

        @Test func keepsTheNewestTwo() throws {
            let dir = try TemporaryDirectory()
            let store = try SnapshotStore(directory: dir.path, app: Disk.app)
            try store.write([1], coveringThrough: 10)
            let second = try store.write([2], coveringThrough: 20)
            #expect(second.retained == [10, 20])
            #expect(second.compactableThrough == 10)
            let third = try store.write([3], coveringThrough: 30)
            #expect(third.retained == [20, 30])
            #expect(third.deleted == [store.path(for: 10)])
            #expect(third.compactableThrough == 20)
            #expect(try store.snapshotLSNs() == [20, 30])
            #expect(try Disk.list(dir.snapshots) == [
                "snapshot-00000000000000000020.snap", "snapshot-00000000000000000030.snap",
            ])
            #expect(try store.loadNewest()?.payload == [3])
            #expect(throws: PersistenceError.staleSnapshot(lsn: 25, newest: 30)) {
                try store.write([4], coveringThrough: 25)
            }
        }

        @Test func corruptNewestFallsBackToThePreviousOne() throws {
            let dir = try TemporaryDirectory()
            let store = try SnapshotStore(directory: dir.path, app: Disk.app)
            try store.write(Disk.payload(1), coveringThrough: 10)
            let newest = try store.write(Disk.payload(2), coveringThrough: 20)
            let payloadStart = 34 + 8
            try Disk.flip(newest.file, at: payloadStart + 3)
            let header = Array(try Disk.read(newest.file)[..<(payloadStart - 4)])
            var flipped = Disk.payload(2)
            flipped[3] ^= 0xFF

            let loaded = try #require(try store.loadNewest())
            #expect(loaded == LoadedSnapshot(
                lsn: 10, payload: Disk.payload(1), file: store.path(for: 10),
                rejected: [SnapshotRejection(
                    file: newest.file, lsn: 20,
                    defect: .checksumMismatch(
                        stored: CRC32C.checksum(header + Disk.payload(2)), computed: CRC32C.checksum(header + flipped)),
                    movedTo: newest.file + ".corrupt")]))
            #expect(try store.snapshotLSNs() == [10])
            #expect(try Disk.list(dir.snapshots) == [
                "snapshot-00000000000000000010.snap", "snapshot-00000000000000000020.snap.corrupt",
            ])
        }

        @Test func truncatedNewestFallsBackAndAllCorruptIsAnError() throws {
            let dir = try TemporaryDirectory()
            let store = try SnapshotStore(directory: dir.path, app: Disk.app)
            let older = try store.write(Disk.payload(1), coveringThrough: 10)
            let newest = try store.write(Disk.payload(2), coveringThrough: 20)
            try Disk.truncate(newest.file, to: 30)
            let loaded = try store.loadNewest()
            #expect(loaded?.lsn == 10)
            #expect(loaded?.rejected.map(\.defect) == [.truncated(size: 30, needed: 42)])

            try Disk.truncate(older.file, to: 50)
            #expect(throws: PersistenceError.noValidSnapshot(directory: dir.snapshots, rejected: [
                SnapshotRejection(file: older.file, lsn: 10, defect: .lengthMismatch(declared: 20, actual: 8), movedTo: older.file + ".corrupt"),
            ])) {
                _ = try store.loadNewest()
            }
        }

        @Test func unknownVersionAndOtherAppAreErrorsAndNothingChanges() throws {
            let dir = try TemporaryDirectory()
            let store = try SnapshotStore(directory: dir.path, app: Disk.app)
            let written = try store.write([1, 2, 3], coveringThrough: 10)
            let before = try Disk.contents(of: dir.snapshots)
            #expect(throws: PersistenceError.appMismatch(expected: "other-app", found: Disk.app, file: written.file)) {
                _ = try SnapshotStore(directory: dir.path, app: "other-app").loadNewest()
            }
            var bytes = try Disk.read(written.file)
            bytes[8] = 9
            try Disk.write(bytes, to: written.file)
            let patched = try Disk.contents(of: dir.snapshots)
            #expect(throws: PersistenceError.unsupportedFormat(version: 9, file: written.file)) {
                _ = try store.loadNewest()
            }
            #expect(try Disk.contents(of: dir.snapshots) == patched)
            #expect(before.keys == patched.keys)
        }

        @Test func leftoverTemporaryFileIsRemovedOnOpen() throws {
            let dir = try TemporaryDirectory()
            _ = try SnapshotStore(directory: dir.path, app: Disk.app)
            try Disk.write([1, 2, 3], to: dir.snapshots + "/snapshot-00000000000000000007.snap.tmp")
            let store = try SnapshotStore(directory: dir.path, app: Disk.app)
            #expect(try Disk.list(dir.snapshots) == [])
            #expect(try store.loadNewest() == nil)
        }

        /// Segments hold 10 records each (see JournalRecoveryTests): 1...10, 11...20, ..., 41...45.
        @Test func compactionAfterSnapshotsRemovesOnlyCoveredSegments() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app, segmentBytes: 382)
            let store = try SnapshotStore(directory: dir.path, app: Disk.app)
            try Disk.fill(journal, 1...45, batch: 4)

            let first = try store.write([1], coveringThrough: 12)
            #expect(try journal.compact(through: first.compactableThrough) == [])
            let second = try store.write([2], coveringThrough: 25)
            #expect(second.compactableThrough == 12)
            #expect(try journal.compact(through: second.compactableThrough) == [dir.segment(1)])
            #expect(journal.firstLSN == 11)
            #expect(try journal.records(after: 12) == Disk.expected(13...45))

            #expect(try journal.compact(through: 25) == [dir.segment(11)])
            #expect(try Disk.list(dir.journal) == [21, 31, 41].map { JournalSegment.fileName(firstLSN: $0) })
            let newest = try #require(try store.loadNewest())
            #expect(try journal.records(after: newest.lsn) == Disk.expected(26...45))
            #expect(throws: PersistenceError.journalGap(requestedAfter: 12, oldestAvailable: 21, directory: dir.path)) {
                _ = try journal.records(after: 12)
            }
            // The segment being written survives any compaction.
            #expect(try journal.compact(through: 1000) == [dir.segment(21), dir.segment(31)])
            #expect(try Disk.list(dir.journal) == [JournalSegment.fileName(firstLSN: 41)])
            try journal.close()

            let reopened = try Journal(directory: dir.path, app: Disk.app, segmentBytes: 382)
            #expect(reopened.recoveryReport == JournalRecoveryReport(
                segmentsScanned: 1, recordsKept: 5, firstLSN: 41, lastLSN: 45, damage: nil))
            #expect(try reopened.records(after: 40) == Disk.expected(41...45))
            #expect(try reopened.append(Disk.payload(46)) == 46)
        }
    }
}
