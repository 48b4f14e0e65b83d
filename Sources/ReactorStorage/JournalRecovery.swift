import Glibc

/// The scan a ``Journal`` runs when it opens: checks every segment header and record in LSN
/// order, stops at the first damage, surveys what lies after it, and then either cuts it (a torn
/// tail, or any damage under ``JournalRepairPolicy/truncate``) or refuses with
/// ``PersistenceError/journalDamaged(_:)`` and changes nothing.
///
/// Repair never invents or skips data: the damaged segment is cut at its last good record, the
/// cut bytes are saved beside it unless they were a plain torn write at the end of the log, and
/// every later segment is renamed `<name>.corrupt`. A foreign or unknown segment header is not
/// damage: it throws and leaves the files untouched.
enum JournalRecovery {
    struct Outcome {
        var segments: [JournalSegment]
        var report: JournalRecoveryReport
    }

    /// The result of reading one segment file.
    private struct SegmentScan {
        var headerLength: Int
        var validEnd: Int
        var recordCount: UInt64
        var problem: JournalDamage.Problem?
    }

    /// The first damaged spot: in `found[index]` at `offset`, or a hole before `found[index]`.
    private struct Spot {
        var index: Int
        var offset: Int
        var problem: JournalDamage.Problem
        var lastIntactLSN: UInt64
        /// The damaged segment as far as it is intact, and its bytes; `nil` for a hole.
        var segment: (scanned: JournalSegment, bytes: [UInt8])?
    }

    /// What lies after the damage.
    private struct Survey {
        var intact: UInt64 = 0
        var exact = true
        var lastLSN: UInt64
    }

    /// Scans and repairs (or refuses to repair) the segments in `directory` (the `journal`
    /// subdirectory). Repairs are synced to disk whatever the fsync policy: they happen once, at
    /// startup. A refusal happens before anything is written, renamed or cut. `readOnly` scans
    /// and surveys only: any damage is reported, nothing refused or changed, and the segments
    /// returned end where the damage starts.
    static func run(directory: String, app: String, repair: JournalRepairPolicy, readOnly: Bool = false) throws -> Outcome {
        let found = try PosixFile.list(directory)
            .compactMap { name in JournalSegment.firstLSN(fromFileName: name).map { (lsn: $0, name: name) } }
            .sorted { $0.lsn < $1.lsn }
        let paths = found.map { directory + "/" + $0.name }
        var segments: [JournalSegment] = []
        var spot: Spot?

        for (index, entry) in found.enumerated() {
            let path = paths[index]
            if let previous = segments.last, entry.lsn != previous.lastLSN + 1 {
                spot = Spot(
                    index: index, offset: 0, problem: .segmentGap(expected: previous.lastLSN + 1, found: entry.lsn),
                    lastIntactLSN: previous.lastLSN, segment: nil)
                break
            }
            let bytes = try PosixFile.readFile(path)
            let scan = try bytes.withUnsafeBytes { try scanSegment($0, firstLSN: entry.lsn, app: app, file: path) }
            let segment = JournalSegment(
                firstLSN: entry.lsn, path: path, headerLength: scan.headerLength,
                size: scan.validEnd, recordCount: scan.recordCount)
            guard let problem = scan.problem else {
                segments.append(segment)
                continue
            }
            spot = Spot(
                index: index, offset: scan.validEnd, problem: problem,
                lastIntactLSN: segment.lastLSN, segment: (segment, bytes))
            break
        }
        guard let spot else {
            return Outcome(segments: segments, report: report(segments, damage: nil))
        }

        let survey = surveyAfter(spot, paths: paths, firstLSNs: found.map(\.lsn), app: app)
        let isTornTail: Bool
        switch spot.problem {
        case .segmentGap, .lsnOutOfSequence: isTornTail = false
        case .partialSegmentHeader, .partialRecordHeader, .shortPayload, .checksumMismatch:
            isTornTail = spot.index == found.count - 1 && survey.intact == 0
        }
        var damage = JournalDamage(
            segment: paths[spot.index], offset: spot.offset, problem: spot.problem,
            lastIntactLSN: spot.lastIntactLSN, recordsKeptInSegment: spot.segment?.scanned.recordCount ?? 0,
            isTornTail: isTornTail, intactRecordsAfter: survey.intact, intactRecordsAfterIsExact: survey.exact,
            lastLSNFound: survey.lastLSN, bytesCut: 0, preservedCopy: nil, movedAside: [])
        if readOnly {
            if let intact = spot.segment?.scanned, intact.recordCount > 0 { segments.append(intact) }
            return Outcome(segments: segments, report: report(segments, damage: damage))
        }
        guard isTornTail || repair == .truncate else {
            throw PersistenceError.journalDamaged(damage)
        }

        guard let damaged = spot.segment else {
            damage.movedAside = try moveAside(Array(paths[spot.index...]), directory: directory)
            return Outcome(segments: segments, report: report(segments, damage: damage))
        }
        var segment = damaged.scanned
        let bytes = damaged.bytes
        let cut = bytes.count - spot.offset
        if cut > 0 && !(spot.problem.isTornWrite && isTornTail) {
            let copy = PosixFile.freshPath("\(segment.path).cut-at-\(spot.offset).corrupt")
            try saveCopy(bytes[spot.offset...], to: copy)
            damage.preservedCopy = copy
        }
        segment.size = try cutSegment(segment.path, at: spot.offset, app: app)
        segments.append(segment)
        damage.bytesCut = cut
        damage.movedAside = try moveAside(Array(paths[(spot.index + 1)...]), directory: directory)
        try PosixFile.syncDirectory(directory)
        return Outcome(segments: segments, report: report(segments, damage: damage))
    }

    private static func report(_ segments: [JournalSegment], damage: JournalDamage?) -> JournalRecoveryReport {
        JournalRecoveryReport(
            segmentsScanned: segments.count,
            recordsKept: segments.reduce(0) { $0 + $1.recordCount },
            firstLSN: segments.first?.firstLSN ?? 1,
            lastLSN: segments.last?.lastLSN ?? 0,
            damage: damage)
    }

    // MARK: Surveying what follows the damage

    /// Counts the intact records after the damage without changing anything: past the damaged
    /// record in its own segment (resynchronising, see ``resync(_:damagedAt:after:)``), then in
    /// every later segment.
    private static func surveyAfter(_ spot: Spot, paths: [String], firstLSNs: [UInt64], app: String) -> Survey {
        var survey = Survey(lastLSN: spot.lastIntactLSN)
        var next = spot.index
        if let damaged = spot.segment {
            next += 1
            if case .partialSegmentHeader = spot.problem {} else {
                damaged.bytes.withUnsafeBytes { walk($0, from: spot.offset, after: spot.lastIntactLSN, damagedAtStart: true, into: &survey) }
            }
        }
        for index in next..<paths.count {
            guard let bytes = try? PosixFile.readFile(paths[index]) else {
                survey.exact = false
                continue
            }
            bytes.withUnsafeBytes { raw in
                switch try? SegmentHeader.check(raw, app: app, file: paths[index]) {
                case .valid(let headerLength):
                    walk(raw, from: headerLength, after: firstLSNs[index] - 1, damagedAtStart: false, into: &survey)
                case .torn:
                    break  // Shorter than a header: no record in it.
                case nil:
                    survey.exact = false  // Not ours to read: it may hold records.
                }
            }
        }
        return survey
    }

    /// Walks the frames of one segment from `offset`, counting intact ones into `survey`; at each
    /// damaged frame (and at `offset` itself if `damagedAtStart`) it resynchronises.
    private static func walk(
        _ bytes: UnsafeRawBufferPointer, from start: Int, after lsn: UInt64, damagedAtStart: Bool, into survey: inout Survey
    ) {
        var offset = start
        var last = lsn
        var damaged = damagedAtStart
        while offset < bytes.count {
            if !damaged, case .record(let found, let payload) = RecordFrame.decode(bytes, at: offset, expectedLSN: last + 1) {
                survey.intact += 1
                last = found
                offset = payload.upperBound
                continue
            }
            guard let next = resync(bytes, damagedAt: offset, after: last) else { break }
            offset = next.offset
            last = next.lsn - 1
            damaged = false
        }
        survey.lastLSN = max(survey.lastLSN, last)
    }

    /// The next intact frame after the damaged one at `offset`, whose LSN must be above `lsn`
    /// (the last intact one): first where the damaged frame's own length says the next one starts,
    /// else the first offset past it where a frame's checksum holds and its LSN is one the log
    /// could have there (each frame takes at least 16 bytes, so a frame `k * 16` bytes on holds at
    /// most LSN `lsn + 1 + k`). `nil` if there is none in the rest of the segment.
    private static func resync(_ bytes: UnsafeRawBufferPointer, damagedAt offset: Int, after lsn: UInt64) -> (offset: Int, lsn: UInt64)? {
        let headerSize = RecordFrame.headerSize
        if bytes.count - offset >= headerSize {
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            let next = offset + headerSize + length
            if next < bytes.count, let found = intactFrame(bytes, at: next), found > lsn {
                return (next, found)
            }
        }
        var candidate = offset + 1
        while candidate + headerSize <= bytes.count {
            let found = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: candidate + 8, as: UInt64.self))
            if found > lsn, found - lsn <= UInt64(1 + (candidate - offset) / headerSize), intactFrame(bytes, at: candidate) != nil {
                return (candidate, found)
            }
            candidate += 1
        }
        return nil
    }

    /// The LSN of the frame at `offset` if it is complete and its checksum holds.
    private static func intactFrame(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64? {
        guard bytes.count - offset >= RecordFrame.headerSize else { return nil }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        guard bytes.count - offset - RecordFrame.headerSize >= length else { return nil }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let lsn = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
        let start = offset + RecordFrame.headerSize
        let payload = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
        return RecordFrame.checksum(lsn: lsn, payload: payload) == stored ? lsn : nil
    }

    // MARK: Reading and repairing

    private static func scanSegment(
        _ bytes: UnsafeRawBufferPointer, firstLSN: UInt64, app: String, file: String
    ) throws -> SegmentScan {
        switch try SegmentHeader.check(bytes, app: app, file: file) {
        case .torn(let available):
            return SegmentScan(
                headerLength: SegmentHeader.encode(app: app).count, validEnd: 0, recordCount: 0,
                problem: .partialSegmentHeader(available: available))
        case .valid(let headerLength):
            var offset = headerLength
            var count: UInt64 = 0
            while offset < bytes.count {
                switch RecordFrame.decode(bytes, at: offset, expectedLSN: firstLSN + count) {
                case .record(_, let payload):
                    offset = payload.upperBound
                    count += 1
                case .damaged(let problem):
                    return SegmentScan(headerLength: headerLength, validEnd: offset, recordCount: count, problem: problem)
                }
            }
            return SegmentScan(headerLength: headerLength, validEnd: offset, recordCount: count, problem: nil)
        }
    }

    /// Truncates the segment to `offset` (rewriting the header if even that was torn) and syncs
    /// it. Returns the new size.
    private static func cutSegment(_ path: String, at offset: Int, app: String) throws -> Int {
        let fd = try PosixFile.open(path, flags: O_RDWR)
        defer { PosixFile.close(fd) }
        try PosixFile.truncate(fd, to: offset, path: path)
        var size = offset
        if offset == 0 {
            let header = SegmentHeader.encode(app: app)
            try header.withUnsafeBytes { try PosixFile.write(fd, $0, at: 0, path: path) }
            size = header.count
        }
        try PosixFile.sync(fd, path: path)
        return size
    }

    private static func saveCopy(_ bytes: ArraySlice<UInt8>, to path: String) throws {
        let fd = try PosixFile.open(path, flags: O_WRONLY | O_CREAT | O_EXCL)
        defer { PosixFile.close(fd) }
        try bytes.withUnsafeBytes { try PosixFile.write(fd, $0, at: 0, path: path) }
        try PosixFile.sync(fd, path: path)
    }

    /// Renames each path to `<path>.corrupt` (or `.corrupt.N` if taken); returns the new paths.
    private static func moveAside(_ paths: [String], directory: String) throws -> [String] {
        guard !paths.isEmpty else { return [] }
        var moved: [String] = []
        for path in paths {
            let target = PosixFile.freshPath(path + ".corrupt")
            try PosixFile.rename(path, to: target)
            moved.append(target)
        }
        try PosixFile.syncDirectory(directory)
        return moved
    }
}
