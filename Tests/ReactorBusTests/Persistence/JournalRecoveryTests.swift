import Testing
@testable import ReactorBus

extension PersistenceTests {
    /// Reopening after crashes and disk damage. Records are 20-byte payloads (36-byte frames)
    /// and segments hold exactly 10 of them: 22 + 10 * 36 = 382 bytes.
    @Suite struct JournalRecoveryTests {
        static let segmentBytes = 382
        static let frame = 36

        private func makeLog(_ dir: TemporaryDirectory, records: Int) throws {
            let journal = try Journal(directory: dir.path, app: Disk.app, segmentBytes: Self.segmentBytes)
            try Disk.fill(journal, 1...records, batch: 5)
            try journal.close()
        }

        private func open(_ dir: TemporaryDirectory) throws -> Journal {
            try Journal(directory: dir.path, app: Disk.app, segmentBytes: Self.segmentBytes)
        }

        /// Appends one more record after recovery, then checks a second reopen is clean and
        /// replays exactly the kept records plus the new one.
        private func expectAppendsContinue(_ dir: TemporaryDirectory, kept: Int) throws {
            let journal = try open(dir)
            #expect(journal.recoveryReport.isClean)
            let extra = Disk.payload(1000)
            #expect(try journal.append(extra) == UInt64(kept + 1))
            try journal.close()
            let again = try open(dir)
            #expect(again.recoveryReport.isClean)
            #expect(again.recoveryReport.lastLSN == UInt64(kept + 1))
            #expect(try again.records(after: 0) == Disk.expected(1...kept) + [JournalRecord(lsn: UInt64(kept + 1), payload: extra)])
        }

        @Test func tornLastRecordIsCut() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 10)
            try Disk.truncate(dir.segment(1), to: 382 - 5)
            do {
                let journal = try open(dir)
                let offset = Disk.segmentHeader + 9 * Self.frame
                #expect(journal.recoveryReport == JournalRecoveryReport(
                    segmentsScanned: 1, recordsKept: 9, firstLSN: 1, lastLSN: 9,
                    damage: JournalDamage(
                        segment: dir.segment(1), offset: offset, problem: .shortPayload(declared: 20, available: 15),
                        recordsKeptInSegment: 9, bytesCut: 31, preservedCopy: nil, movedAside: [])))
                #expect(journal.lastLSN == 9)
                #expect(try Disk.size(dir.segment(1)) == offset)
                #expect(try journal.records(after: 0) == Disk.expected(1...9))
                try journal.close()
            }
            try expectAppendsContinue(dir, kept: 9)
            #expect(try Disk.list(dir.journal) == ["segment-00000000000000000001.log"])
        }

        @Test func partialRecordHeaderIsCut() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 10)
            let offset = Disk.segmentHeader + 9 * Self.frame
            try Disk.truncate(dir.segment(1), to: offset + 7)
            do {
                let journal = try open(dir)
                #expect(journal.recoveryReport.damage == JournalDamage(
                    segment: dir.segment(1), offset: offset, problem: .partialRecordHeader(available: 7),
                    recordsKeptInSegment: 9, bytesCut: 7, preservedCopy: nil, movedAside: []))
                #expect(journal.recoveryReport.recordsKept == 9)
                try journal.close()
            }
            try expectAppendsContinue(dir, kept: 9)
        }

        @Test func partialSegmentHeaderIsRewritten() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 15)
            try Disk.truncate(dir.segment(11), to: 5)
            do {
                let journal = try open(dir)
                #expect(journal.recoveryReport == JournalRecoveryReport(
                    segmentsScanned: 2, recordsKept: 10, firstLSN: 1, lastLSN: 10,
                    damage: JournalDamage(
                        segment: dir.segment(11), offset: 0, problem: .partialSegmentHeader(available: 5),
                        recordsKeptInSegment: 0, bytesCut: 5, preservedCopy: nil, movedAside: [])))
                #expect(try Disk.read(dir.segment(11)) == SegmentHeader.encode(app: Disk.app))
                try journal.close()
            }
            try expectAppendsContinue(dir, kept: 10)
        }

        @Test func flippedByteInTheMiddleKeepsThePrefixAndMovesLaterSegmentsAside() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 45)  // segments 1, 11, 21, 31, 41
            let original = try Disk.read(dir.segment(11))
            let badRecord = Disk.segmentHeader + 3 * Self.frame  // LSN 14
            try Disk.flip(dir.segment(11), at: badRecord + 16 + 5)
            var flipped = Disk.payload(14)
            flipped[5] ^= 0xFF
            let lsn14: [UInt8] = [14, 0, 0, 0, 0, 0, 0, 0]
            do {
                let journal = try open(dir)
                #expect(journal.recoveryReport == JournalRecoveryReport(
                    segmentsScanned: 2, recordsKept: 13, firstLSN: 1, lastLSN: 13,
                    damage: JournalDamage(
                        segment: dir.segment(11), offset: badRecord,
                        problem: .checksumMismatch(
                            stored: CRC32C.checksum(lsn14 + Disk.payload(14)), computed: CRC32C.checksum(lsn14 + flipped)),
                        recordsKeptInSegment: 3, bytesCut: 382 - badRecord,
                        preservedCopy: dir.segment(11) + ".cut-at-130.corrupt",
                        movedAside: [21, 31, 41].map { dir.segment($0) + ".corrupt" })))
                #expect(try journal.records(after: 0) == Disk.expected(1...13))
                try journal.close()
            }
            #expect(try Disk.list(dir.journal) == [
                "segment-00000000000000000001.log",
                "segment-00000000000000000011.log",
                "segment-00000000000000000011.log.cut-at-130.corrupt",
                "segment-00000000000000000021.log.corrupt",
                "segment-00000000000000000031.log.corrupt",
                "segment-00000000000000000041.log.corrupt",
            ])
            var cut = Array(original[badRecord...])
            cut[16 + 5] ^= 0xFF
            #expect(try Disk.read(dir.segment(11) + ".cut-at-130.corrupt") == cut)
            try expectAppendsContinue(dir, kept: 13)
        }

        @Test func recordWithTheWrongLSNIsCutAndKept() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 10)
            var forged: [UInt8] = []
            [UInt8]([9, 9, 9, 9]).withUnsafeBytes { RecordFrame.append(lsn: 99, payload: $0, to: &forged) }
            try Disk.write(try Disk.read(dir.segment(1)) + forged, to: dir.segment(1))
            do {
                let journal = try open(dir)
                #expect(journal.recoveryReport.damage == JournalDamage(
                    segment: dir.segment(1), offset: 382, problem: .lsnOutOfSequence(expected: 11, found: 99),
                    recordsKeptInSegment: 10, bytesCut: 20,
                    preservedCopy: dir.segment(1) + ".cut-at-382.corrupt", movedAside: []))
                try journal.close()
            }
            try expectAppendsContinue(dir, kept: 10)
        }

        @Test func missingSegmentStopsReplayBeforeTheHole() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 45)
            try Disk.truncate(dir.segment(21), to: 0)
            try PosixFile.remove(dir.segment(21))
            do {
                let journal = try open(dir)
                #expect(journal.recoveryReport == JournalRecoveryReport(
                    segmentsScanned: 2, recordsKept: 20, firstLSN: 1, lastLSN: 20,
                    damage: JournalDamage(
                        segment: dir.segment(31), offset: 0, problem: .segmentGap(expected: 21, found: 31),
                        recordsKeptInSegment: 0, bytesCut: 0, preservedCopy: nil,
                        movedAside: [dir.segment(31) + ".corrupt", dir.segment(41) + ".corrupt"])))
                try journal.close()
            }
            try expectAppendsContinue(dir, kept: 20)
        }

        @Test func unknownFormatVersionIsRefusedAndNothingChanges() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 15)
            var bytes = try Disk.read(dir.segment(11))
            bytes[8] = 2
            try Disk.write(bytes, to: dir.segment(11))
            let before = try Disk.contents(of: dir.journal)
            #expect(throws: PersistenceError.unsupportedFormat(version: 2, file: dir.segment(11))) {
                _ = try open(dir)
            }
            #expect(try Disk.contents(of: dir.journal) == before)
        }

        @Test func otherAppIsRefusedAndNothingChanges() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 15)
            let before = try Disk.contents(of: dir.journal)
            #expect(throws: PersistenceError.appMismatch(expected: "other-app", found: Disk.app, file: dir.segment(1))) {
                _ = try Journal(directory: dir.path, app: "other-app")
            }
            #expect(try Disk.contents(of: dir.journal) == before)
            // The failed open released the directory lock.
            let journal = try open(dir)
            #expect(journal.recoveryReport.isClean)
        }

        @Test func badMagicIsRefused() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 3)
            try Disk.flip(dir.segment(1), at: 0)
            let before = try Disk.contents(of: dir.journal)
            #expect(throws: PersistenceError.notAJournalSegment(file: dir.segment(1))) {
                _ = try open(dir)
            }
            #expect(try Disk.contents(of: dir.journal) == before)
        }
    }
}
