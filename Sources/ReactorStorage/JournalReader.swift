import Glibc

/// Streams committed journal records in LSN order, one segment in memory at a time, checking
/// each record's checksum and LSN again as it is read.
///
/// Get one from ``Journal/reader(after:)``. It sees the segments and sizes that were committed
/// when it was made; records committed later are not included. A value type with no shared
/// state; use it on the thread that owns the journal (compaction may delete its segments).
package struct JournalReader {
    private var segments: [JournalSegment]
    private let after: UInt64
    private var bytes: [UInt8] = []
    private var offset = 0
    private var current: JournalSegment?
    private var nextLSN: UInt64 = 0

    init(segments: [JournalSegment], after: UInt64) {
        self.segments = segments
        self.after = after
    }

    /// The next record, or `nil` at the end.
    ///
    /// - Throws: ``PersistenceError/damagedRecord(file:offset:problem:)`` if a record no longer
    ///   passes its checks (never returns such a record), ``PersistenceError/io(operation:path:errno:)``.
    package mutating func next() throws -> JournalRecord? {
        while true {
            if let segment = current, offset < segment.size {
                let decoded = bytes.withUnsafeBytes {
                    RecordFrame.decode(UnsafeRawBufferPointer(rebasing: $0[..<segment.size]), at: offset, expectedLSN: nextLSN)
                }
                switch decoded {
                case .damaged(let problem):
                    throw PersistenceError.damagedRecord(file: segment.path, offset: offset, problem: problem.description)
                case .record(let lsn, let payload):
                    offset = payload.upperBound
                    nextLSN += 1
                    if lsn > after { return JournalRecord(lsn: lsn, payload: Array(bytes[payload])) }
                }
                continue
            }
            guard !segments.isEmpty else {
                current = nil
                bytes = []
                return nil
            }
            let segment = segments.removeFirst()
            let fd = try PosixFile.open(segment.path, flags: O_RDONLY)
            defer { PosixFile.close(fd) }
            bytes = try PosixFile.read(fd, count: segment.size, at: 0, path: segment.path)
            guard bytes.count == segment.size else {
                throw PersistenceError.damagedRecord(
                    file: segment.path, offset: bytes.count,
                    problem: "file is \(bytes.count) bytes, \(segment.size) were committed")
            }
            current = segment
            offset = segment.headerLength
            nextLSN = segment.firstLSN
        }
    }
}
