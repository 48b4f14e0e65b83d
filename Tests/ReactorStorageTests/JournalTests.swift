import Glibc
@testable import ReactorStorage
import Testing

extension PersistenceTests {
    @Suite struct JournalTests {
        @Test func roundTripAcrossCommitsAndRotations() throws {
            let dir = try TemporaryDirectory()
            // Payload lengths 1...60 vary, so rotation points are irregular.
            let payloads = (1...200).map { Disk.payload($0, length: 1 + $0 % 60) }
            do {
                let journal = try Journal(directory: dir.path, app: Disk.app, segmentBytes: 512)
                #expect(journal.recoveryReport.isClean)
                #expect(journal.lastLSN == 0)
                for (index, payload) in payloads.enumerated() {
                    #expect(try journal.append(payload) == UInt64(index + 1))
                    if index % 7 == 6 { try journal.commit() }
                }
                try journal.close()
            }
            let segments = try Disk.list(dir.journal)
            #expect(segments.count > 10)
            #expect(segments.first == "segment-00000000000000000001.log")
            for name in segments {
                #expect(try Disk.size(dir.journal + "/" + name) <= 512)
            }

            let reopened = try Journal(directory: dir.path, app: Disk.app, segmentBytes: 512)
            #expect(reopened.recoveryReport == JournalRecoveryReport(
                segmentsScanned: segments.count, recordsKept: 200, firstLSN: 1, lastLSN: 200, damage: nil))
            #expect(reopened.lastLSN == 200)
            #expect(reopened.committedLSN == 200)
            let expected = payloads.enumerated().map { JournalRecord(lsn: UInt64($0.offset + 1), payload: $0.element) }
            #expect(try reopened.records(after: 0) == expected)
            #expect(try reopened.records(after: 137) == Array(expected[137...]))
            #expect(try reopened.records(after: 200) == [])
            // Each segment's name is the LSN of its first record.
            for name in segments {
                let first = try #require(JournalSegment.firstLSN(fromFileName: name))
                #expect(try reopened.records(after: first - 1).first?.lsn == first)
            }
            try reopened.close()
        }

        @Test func exactByteLayout() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app)
            try journal.append([0xAA, 0xBB, 0xCC])
            try journal.commit()
            try journal.close()
            let bytes = try Disk.read(dir.segment(1))
            var expected = Array("RBUSJRNL".utf8) + [1, 0, 0, 0] + [8, 0] + Array("test-app".utf8)
            let lsnBytes: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0]
            let crc = CRC32C.checksum(lsnBytes + [0xAA, 0xBB, 0xCC])
            expected += [3, 0, 0, 0]
            expected += withUnsafeBytes(of: crc.littleEndian) { Array($0) }
            expected += lsnBytes + [0xAA, 0xBB, 0xCC]
            #expect(bytes == expected)
            #expect(try Disk.read(dir.path + "/LOCK") == Array("\(getpid())\n".utf8))
        }

        @Test func uncommittedRecordsAreNotReadBackButCloseCommitsThem() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app)
            try Disk.fill(journal, 1...3)
            try journal.append(Disk.payload(4))
            #expect(journal.lastLSN == 4)
            #expect(journal.committedLSN == 3)
            #expect(try journal.records(after: 0) == Disk.expected(1...3))
            try journal.close()
            let reopened = try Journal(directory: dir.path, app: Disk.app)
            #expect(try reopened.records(after: 0) == Disk.expected(1...4))
        }

        @Test func oversizedPayloadIsRejectedAndTheJournalStaysUsable() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app, maxRecordBytes: 10)
            #expect(throws: PersistenceError.recordTooLarge(size: 11, limit: 10)) {
                try journal.append([UInt8](repeating: 1, count: 11))
            }
            #expect(try journal.append([UInt8](repeating: 1, count: 10)) == 1)
            try journal.commit()
            #expect(try journal.records(after: 0) == [JournalRecord(lsn: 1, payload: [UInt8](repeating: 1, count: 10))])
        }

        @Test func secondJournalOnTheSameDirectoryIsLockedOut() throws {
            let dir = try TemporaryDirectory()
            let first = try Journal(directory: dir.path, app: Disk.app)
            let error = PersistenceError.locked(directory: dir.path, pid: getpid())
            #expect(throws: error) {
                _ = try Journal(directory: dir.path, app: Disk.app)
            }
            #expect(error.description == "data directory \(dir.path) is locked by another authority (pid \(getpid())); stop it or use another directory")
            try first.close()
            let second = try Journal(directory: dir.path + "/", app: Disk.app)
            try second.close()
        }

        @Test func useAfterCloseThrows() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app)
            try journal.close()
            try journal.close()
            #expect(throws: PersistenceError.closed(directory: dir.path)) {
                try journal.append([1])
            }
        }

        @Test func invalidConfigurationIsRejected() throws {
            let dir = try TemporaryDirectory()
            #expect(throws: PersistenceError.invalidConfiguration("app name must be 1 to 255 UTF-8 bytes, got 0")) {
                _ = try Journal(directory: dir.path, app: "")
            }
            #expect(throws: PersistenceError.invalidConfiguration("segmentBytes must be positive, got 0")) {
                _ = try Journal(directory: dir.path, app: Disk.app, segmentBytes: 0)
            }
        }
    }
}
