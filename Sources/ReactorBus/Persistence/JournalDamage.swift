/// The first damaged spot recovery found in the journal, and what it did about it.
///
/// Recovery keeps every record before this spot, cuts the segment there (`ftruncate` + sync),
/// and renames any later segments with a `.corrupt` suffix so nothing is replayed past a hole.
public struct JournalDamage: Hashable, Sendable, CustomStringConvertible {
    /// What was wrong at ``offset``.
    public enum Problem: Hashable, Sendable, CustomStringConvertible {
        /// The segment is shorter than its header: its creation was cut short.
        case partialSegmentHeader(available: Int)
        /// Fewer than 16 bytes remain where a record header should be.
        case partialRecordHeader(available: Int)
        /// The record declares a longer payload than the file holds.
        case shortPayload(declared: Int, available: Int)
        /// The CRC32C over LSN and payload does not match the stored one.
        case checksumMismatch(stored: UInt32, computed: UInt32)
        /// The checksum is fine but the LSN does not follow its predecessor.
        case lsnOutOfSequence(expected: UInt64, found: UInt64)
        /// A segment's name does not continue the previous segment (a segment is missing).
        case segmentGap(expected: UInt64, found: UInt64)

        public var description: String {
            switch self {
            case .partialSegmentHeader(let n): "partial segment header (\(n) bytes)"
            case .partialRecordHeader(let n): "partial record header (\(n) of 16 bytes)"
            case .shortPayload(let declared, let n): "short payload (\(n) of \(declared) bytes)"
            case .checksumMismatch(let stored, let computed):
                "checksum mismatch (stored 0x\(String(stored, radix: 16)), computed 0x\(String(computed, radix: 16)))"
            case .lsnOutOfSequence(let expected, let found): "LSN \(found) where \(expected) was expected"
            case .segmentGap(let expected, let found): "segment starts at LSN \(found), expected \(expected)"
            }
        }

        /// Whether this is what a crash in the middle of a write leaves at the very end of the log
        /// (as opposed to bytes changed after they were written).
        var isTornWrite: Bool {
            switch self {
            case .partialSegmentHeader, .partialRecordHeader, .shortPayload: true
            case .checksumMismatch, .lsnOutOfSequence, .segmentGap: false
            }
        }
    }

    /// Path of the damaged segment.
    public var segment: String
    /// Byte offset in ``segment`` where the damage starts (and where the file now ends).
    public var offset: Int
    /// What was wrong.
    public var problem: Problem
    /// Valid records kept in ``segment`` (before ``offset``).
    public var recordsKeptInSegment: UInt64
    /// Bytes removed from ``segment`` (from ``offset`` to its old end).
    public var bytesCut: Int
    /// Where the cut bytes were saved, unless they were a plain torn write at the end of the log.
    public var preservedCopy: String?
    /// Later segments, renamed with a `.corrupt` suffix (new paths), oldest first.
    public var movedAside: [String]

    public var description: String {
        var text = "\(segment) at offset \(offset): \(problem); kept \(recordsKeptInSegment) records in it, cut \(bytesCut) bytes"
        if let preservedCopy { text += " (saved to \(preservedCopy))" }
        if !movedAside.isEmpty { text += "; moved aside \(movedAside.joined(separator: ", "))" }
        return text
    }
}
