import Glibc

/// The scan a ``Journal`` runs when it opens: checks every segment header and record in LSN
/// order, and repairs the first damage it meets.
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

    /// Scans and repairs the segments in `directory` (the `journal` subdirectory).
    /// Repairs are synced to disk whatever the fsync policy: they happen once, at startup.
    static func run(directory: String, app: String) throws -> Outcome {
        let found = try PosixFile.list(directory)
            .compactMap { name in JournalSegment.firstLSN(fromFileName: name).map { (lsn: $0, name: name) } }
            .sorted { $0.lsn < $1.lsn }
        let paths = found.map { directory + "/" + $0.name }
        var segments: [JournalSegment] = []
        var damage: JournalDamage?
        var recordsKept: UInt64 = 0

        for (index, entry) in found.enumerated() {
            let path = paths[index]
            if let previous = segments.last, entry.lsn != previous.lastLSN + 1 {
                let moved = try moveAside(Array(paths[index...]), directory: directory)
                damage = JournalDamage(
                    segment: path, offset: 0,
                    problem: .segmentGap(expected: previous.lastLSN + 1, found: entry.lsn),
                    recordsKeptInSegment: 0, bytesCut: 0, preservedCopy: nil, movedAside: moved)
                break
            }
            let bytes = try PosixFile.readFile(path)
            let scan = try bytes.withUnsafeBytes { try scanSegment($0, firstLSN: entry.lsn, app: app, file: path) }
            var segment = JournalSegment(
                firstLSN: entry.lsn, path: path, headerLength: scan.headerLength,
                size: scan.validEnd, recordCount: scan.recordCount)
            recordsKept += scan.recordCount
            guard let problem = scan.problem else {
                segments.append(segment)
                continue
            }
            let isLast = index == found.count - 1
            let cut = bytes.count - scan.validEnd
            var preserved: String?
            if cut > 0 && !(problem.isTornWrite && isLast) {
                let copy = PosixFile.freshPath("\(path).cut-at-\(scan.validEnd).corrupt")
                try saveCopy(bytes[scan.validEnd...], to: copy)
                preserved = copy
            }
            segment.size = try cutSegment(path, at: scan.validEnd, app: app)
            segments.append(segment)
            let moved = try moveAside(Array(paths[(index + 1)...]), directory: directory)
            try PosixFile.syncDirectory(directory)
            damage = JournalDamage(
                segment: path, offset: scan.validEnd, problem: problem,
                recordsKeptInSegment: scan.recordCount, bytesCut: cut,
                preservedCopy: preserved, movedAside: moved)
            break
        }

        let report = JournalRecoveryReport(
            segmentsScanned: segments.count,
            recordsKept: recordsKept,
            firstLSN: segments.first?.firstLSN ?? 1,
            lastLSN: segments.last?.lastLSN ?? 0,
            damage: damage)
        return Outcome(segments: segments, report: report)
    }

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
