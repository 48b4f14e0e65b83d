import Glibc

/// One segment file of the journal, as the journal tracks it in memory.
///
/// A segment is named after the LSN of its first record, `segment-<20 digits>.log`, so sorting
/// names sorts the log, and an empty segment still says which LSN comes next.
struct JournalSegment: Equatable {
    static let prefix = "segment-"
    static let suffix = ".log"

    /// LSN of the first record (or of the next record, while the segment is empty).
    var firstLSN: UInt64
    /// Full path of the file.
    var path: String
    /// Bytes of the segment header.
    var headerLength: Int
    /// Bytes in the file that hold the header and valid records.
    var size: Int
    /// Valid records in the file.
    var recordCount: UInt64

    /// LSN of the last record, or `firstLSN - 1` while empty.
    var lastLSN: UInt64 { firstLSN + recordCount - 1 }

    /// `segment-00000000000000000001.log` for LSN 1.
    static func fileName(firstLSN: UInt64) -> String {
        prefix + padded(firstLSN) + suffix
    }

    /// The first LSN encoded in a segment file name, or `nil` for any other name (including
    /// segments moved aside as `.corrupt`).
    static func firstLSN(fromFileName name: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.count == 20, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt64(digits)
    }

    /// `lsn` as 20 decimal digits (UInt64.max has 20).
    static func padded(_ lsn: UInt64) -> String {
        let digits = String(lsn)
        return String(repeating: "0", count: 20 - digits.count) + digits
    }

    /// Creates `segment-<firstLSN>.log` holding only the header, synced (file and directory)
    /// if `sync`. Returns it with a write descriptor the caller owns.
    static func create(in directory: String, firstLSN: UInt64, app: String, sync: Bool) throws -> (segment: JournalSegment, fd: Int32) {
        let path = directory + "/" + fileName(firstLSN: firstLSN)
        let header = SegmentHeader.encode(app: app)
        let fd = try PosixFile.open(path, flags: O_WRONLY | O_CREAT | O_EXCL)
        do {
            try header.withUnsafeBytes { try PosixFile.write(fd, $0, at: 0, path: path) }
            if sync {
                try PosixFile.sync(fd, path: path)
                try PosixFile.syncDirectory(directory)
            }
        } catch {
            PosixFile.close(fd)
            throw error
        }
        let segment = JournalSegment(
            firstLSN: firstLSN, path: path, headerLength: header.count, size: header.count, recordCount: 0)
        return (segment, fd)
    }
}
