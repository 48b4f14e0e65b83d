@testable import ReactorStorage
import Testing

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

        private func openRepairing(_ dir: TemporaryDirectory) throws -> Journal {
            try Journal(directory: dir.path, app: Disk.app, segmentBytes: Self.segmentBytes, repair: .truncate)
        }

        /// The damage value recovery should report (repair fields empty unless given).
        private func damage(
            _ segment: String, at offset: Int, _ problem: JournalDamage.Problem, lastIntact: UInt64, kept: UInt64,
            tornTail: Bool, intactAfter: UInt64, exact: Bool = true, lastFound: UInt64,
            cut: Int = 0, copy: String? = nil, moved: [String] = []
        ) -> JournalDamage {
            JournalDamage(
                segment: segment, offset: offset, problem: problem, lastIntactLSN: lastIntact,
                recordsKeptInSegment: kept, isTornTail: tornTail, intactRecordsAfter: intactAfter,
                intactRecordsAfterIsExact: exact, lastLSNFound: lastFound, bytesCut: cut,
                preservedCopy: copy, movedAside: moved)
        }

        /// Opening without a repair policy throws exactly `expected`, changes no file and releases
        /// the directory lock.
        private func expectRefusal(_ dir: TemporaryDirectory, _ expected: JournalDamage) throws {
            let before = try Disk.contents(of: dir.journal)
            #expect(throws: PersistenceError.journalDamaged(expected)) {
                _ = try open(dir)
            }
            #expect(try Disk.contents(of: dir.journal) == before)
            #expect(throws: PersistenceError.journalDamaged(expected)) {
                _ = try open(dir)
            }
        }

        /// The checksum problem for record `lsn` whose payload byte `index` was flipped.
        private func flippedChecksum(_ lsn: Int, index: Int) -> JournalDamage.Problem {
            var flipped = Disk.payload(lsn)
            flipped[index] ^= 0xFF
            let lsnBytes = withUnsafeBytes(of: UInt64(lsn).littleEndian) { Array($0) }
            return .checksumMismatch(
                stored: CRC32C.checksum(lsnBytes + Disk.payload(lsn)), computed: CRC32C.checksum(lsnBytes + flipped))
        }

        /// Offset of the `index`th record (0-based) in a segment.
        private func recordOffset(_ index: Int) -> Int { Disk.segmentHeader + index * Self.frame }

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

        // MARK: Torn tails: cut automatically

        @Test func tornLastRecordIsCut() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 10)
            try Disk.truncate(dir.segment(1), to: 382 - 5)
            do {
                let journal = try open(dir)
                let offset = recordOffset(9)
                #expect(journal.recoveryReport == JournalRecoveryReport(
                    segmentsScanned: 1, recordsKept: 9, firstLSN: 1, lastLSN: 9,
                    damage: damage(
                        dir.segment(1), at: offset, .shortPayload(declared: 20, available: 15), lastIntact: 9, kept: 9,
                        tornTail: true, intactAfter: 0, lastFound: 9, cut: 31)))
                #expect(journal.recoveryReport.damage?.lostLSNs == nil)
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
            let offset = recordOffset(9)
            try Disk.truncate(dir.segment(1), to: offset + 7)
            do {
                let journal = try open(dir)
                #expect(journal.recoveryReport.damage == damage(
                    dir.segment(1), at: offset, .partialRecordHeader(available: 7), lastIntact: 9, kept: 9,
                    tornTail: true, intactAfter: 0, lastFound: 9, cut: 7))
                #expect(journal.recoveryReport.recordsKept == 9)
                try journal.close()
            }
            try expectAppendsContinue(dir, kept: 9)
        }

        @Test func partialHeaderOfTheNewestSegmentIsRewritten() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 15)
            try Disk.truncate(dir.segment(11), to: 5)
            do {
                let journal = try open(dir)
                #expect(journal.recoveryReport == JournalRecoveryReport(
                    segmentsScanned: 2, recordsKept: 10, firstLSN: 1, lastLSN: 10,
                    damage: damage(
                        dir.segment(11), at: 0, .partialSegmentHeader(available: 5), lastIntact: 10, kept: 0,
                        tornTail: true, intactAfter: 0, lastFound: 10, cut: 5)))
                #expect(try Disk.read(dir.segment(11)) == SegmentHeader.encode(app: Disk.app))
                try journal.close()
            }
            try expectAppendsContinue(dir, kept: 10)
        }

        /// A last record whose checksum fails, followed by zeros (a crash after the file grew but
        /// before all its blocks were written): nothing intact follows, so it is a torn tail. The
        /// cut bytes are saved, since they are not a plain partial write.
        @Test func badLastRecordWithNothingIntactAfterItIsATornTail() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 10)
            try Disk.flip(dir.segment(1), at: recordOffset(9) + 16 + 3)
            try Disk.write(try Disk.read(dir.segment(1)) + [UInt8](repeating: 0, count: 20), to: dir.segment(1))
            do {
                let journal = try open(dir)
                #expect(journal.recoveryReport.damage == damage(
                    dir.segment(1), at: recordOffset(9), flippedChecksum(10, index: 3), lastIntact: 9, kept: 9,
                    tornTail: true, intactAfter: 0, lastFound: 9, cut: 56,
                    copy: dir.segment(1) + ".cut-at-346.corrupt"))
                try journal.close()
            }
            #expect(try Disk.size(dir.segment(1) + ".cut-at-346.corrupt") == 56)
            try expectAppendsContinue(dir, kept: 9)
        }

        // MARK: Damage before the tail: refused unless the truncate policy accepts the loss

        @Test func flippedByteInAnOlderSegmentIsRefusedWithTheCountAfterIt() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 45)  // segments 1, 11, 21, 31, 41
            let badRecord = recordOffset(3)  // LSN 14
            try Disk.flip(dir.segment(11), at: badRecord + 16 + 5)
            let expected = damage(
                dir.segment(11), at: badRecord, flippedChecksum(14, index: 5), lastIntact: 13, kept: 3,
                tornTail: false, intactAfter: 31, lastFound: 45)
            try expectRefusal(dir, expected)
            #expect(expected.lostLSNs == 14...45)
            let message = PersistenceError.journalDamaged(expected).description
            #expect(message.contains("\(dir.segment(11)) at offset 130: checksum mismatch"), "\(message)")
            #expect(message.contains("after LSN 13; 31 intact record(s) after it (up to LSN 45)"), "\(message)")
            #expect(message.contains("nothing was changed"), "\(message)")
            #expect(message.contains("--repair truncate"), "\(message)")
            #expect(message.contains("loses 32 record(s) (LSN 14...45)"), "\(message)")
        }

        @Test func flippedByteInAnOlderSegmentIsCutUnderTheTruncatePolicy() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 45)
            let original = try Disk.read(dir.segment(11))
            let badRecord = recordOffset(3)
            try Disk.flip(dir.segment(11), at: badRecord + 16 + 5)
            do {
                let journal = try openRepairing(dir)
                #expect(journal.recoveryReport == JournalRecoveryReport(
                    segmentsScanned: 2, recordsKept: 13, firstLSN: 1, lastLSN: 13,
                    damage: damage(
                        dir.segment(11), at: badRecord, flippedChecksum(14, index: 5), lastIntact: 13, kept: 3,
                        tornTail: false, intactAfter: 31, lastFound: 45, cut: 382 - badRecord,
                        copy: dir.segment(11) + ".cut-at-130.corrupt",
                        moved: [21, 31, 41].map { dir.segment($0) + ".corrupt" })))
                #expect(journal.recoveryReport.damage?.lostLSNs == 14...45)
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

        /// "Further data after a bad record" in the newest segment is not a torn tail: the records
        /// after it were written (and acknowledged) after the bad one.
        @Test func badRecordWithIntactRecordsAfterItInTheNewestSegmentIsRefused() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 10)
            try Disk.flip(dir.segment(1), at: recordOffset(4) + 16)
            try expectRefusal(dir, damage(
                dir.segment(1), at: recordOffset(4), flippedChecksum(5, index: 0), lastIntact: 4, kept: 4,
                tornTail: false, intactAfter: 5, lastFound: 10))
            let journal = try openRepairing(dir)
            #expect(journal.recoveryReport.lastLSN == 4)
            #expect(journal.recoveryReport.damage?.lostLSNs == 5...10)
            #expect(journal.recoveryReport.damage?.bytesCut == 6 * Self.frame)
        }

        /// A damaged length field (the record seems to run past the end of the file) is found again
        /// by scanning for the next frame whose checksum and LSN fit.
        @Test func damagedLengthIsResynchronisedByScanning() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 10)
            try Disk.flip(dir.segment(1), at: recordOffset(3) + 2)  // length 20 -> 0x00FF0014
            try expectRefusal(dir, damage(
                dir.segment(1), at: recordOffset(3), .shortPayload(declared: 0xFF0014, available: 7 * Self.frame - 16),
                lastIntact: 3, kept: 3, tornTail: false, intactAfter: 6, lastFound: 10))
        }

        @Test func tornEndOfAnOlderSegmentIsRefused() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 15)
            try Disk.truncate(dir.segment(1), to: 382 - 5)
            try expectRefusal(dir, damage(
                dir.segment(1), at: recordOffset(9), .shortPayload(declared: 20, available: 15), lastIntact: 9, kept: 9,
                tornTail: false, intactAfter: 5, lastFound: 15))
            let journal = try openRepairing(dir)
            #expect(journal.recoveryReport.damage?.movedAside == [dir.segment(11) + ".corrupt"])
            #expect(journal.recoveryReport.damage?.lostLSNs == 10...15)
            #expect(try journal.records(after: 0) == Disk.expected(1...9))
        }

        @Test func partialHeaderOfAnOlderSegmentIsRefused() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 25)  // segments 1, 11, 21
            try Disk.truncate(dir.segment(11), to: 5)
            try expectRefusal(dir, damage(
                dir.segment(11), at: 0, .partialSegmentHeader(available: 5), lastIntact: 10, kept: 0,
                tornTail: false, intactAfter: 5, lastFound: 25))
        }

        @Test func recordWithTheWrongLSNIsRefusedThenCutUnderTheTruncatePolicy() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 10)
            var forged: [UInt8] = []
            [UInt8]([9, 9, 9, 9]).withUnsafeBytes { RecordFrame.append(lsn: 99, payload: $0, to: &forged) }
            try Disk.write(try Disk.read(dir.segment(1)) + forged, to: dir.segment(1))
            let found = damage(
                dir.segment(1), at: 382, .lsnOutOfSequence(expected: 11, found: 99), lastIntact: 10, kept: 10,
                tornTail: false, intactAfter: 0, lastFound: 10)
            try expectRefusal(dir, found)
            do {
                let journal = try openRepairing(dir)
                var cut = found
                cut.bytesCut = 20
                cut.preservedCopy = dir.segment(1) + ".cut-at-382.corrupt"
                #expect(journal.recoveryReport.damage == cut)
                try journal.close()
            }
            try expectAppendsContinue(dir, kept: 10)
        }

        @Test func missingSegmentIsRefusedThenMovedAsideUnderTheTruncatePolicy() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 45)
            try PosixFile.remove(dir.segment(21))
            let found = damage(
                dir.segment(31), at: 0, .segmentGap(expected: 21, found: 31), lastIntact: 20, kept: 0,
                tornTail: false, intactAfter: 15, lastFound: 45)
            try expectRefusal(dir, found)
            do {
                let journal = try openRepairing(dir)
                var moved = found
                moved.movedAside = [dir.segment(31) + ".corrupt", dir.segment(41) + ".corrupt"]
                #expect(journal.recoveryReport == JournalRecoveryReport(
                    segmentsScanned: 2, recordsKept: 20, firstLSN: 1, lastLSN: 20, damage: moved))
                try journal.close()
            }
            try expectAppendsContinue(dir, kept: 20)
        }

        /// A later segment that cannot be read as ours may hold records: the count is a lower bound.
        @Test func anUnreadableLaterSegmentMakesTheCountALowerBound() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 25)
            try Disk.flip(dir.segment(11), at: recordOffset(3) + 16 + 5)
            try Disk.flip(dir.segment(21), at: 0)
            let found = damage(
                dir.segment(11), at: recordOffset(3), flippedChecksum(14, index: 5), lastIntact: 13, kept: 3,
                tornTail: false, intactAfter: 6, exact: false, lastFound: 20)
            try expectRefusal(dir, found)
            #expect(PersistenceError.journalDamaged(found).description.contains("at least 6 intact record(s) after it (up to LSN 20)"))
        }

        /// A snapshot through LSN 20 and a journal that ends at 15: the journal continues at 21, so
        /// no new record reuses an LSN the snapshot covers.
        @Test func continuingAfterASnapshotBeyondTheEndNeverReusesAnLSN() throws {
            let dir = try TemporaryDirectory()
            try makeLog(dir, records: 15)
            do {
                let journal = try open(dir)
                #expect(try journal.continueAfter(15) == [])
                #expect(try journal.continueAfter(20) == [dir.segment(1) + ".corrupt", dir.segment(11) + ".corrupt"])
                #expect(journal.lastLSN == 20)
                #expect(journal.firstLSN == 21)
                #expect(try journal.append(Disk.payload(21)) == 21)
                try journal.close()
            }
            #expect(try Disk.list(dir.journal) == [
                "segment-00000000000000000001.log.corrupt",
                "segment-00000000000000000011.log.corrupt",
                "segment-00000000000000000021.log",
            ])
            let reopened = try open(dir)
            #expect(reopened.recoveryReport == JournalRecoveryReport(
                segmentsScanned: 1, recordsKept: 1, firstLSN: 21, lastLSN: 21, damage: nil))
            #expect(try reopened.records(after: 20) == Disk.expected(21...21))
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
