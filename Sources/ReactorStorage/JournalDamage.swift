/// The first damaged spot recovery found in the journal, what lies after it, and what was done
/// about it.
///
/// A torn tail (``isTornTail``) is cut automatically. Any other damage makes opening refuse
/// (``PersistenceError/journalDamaged(_:)``, files untouched) unless the repair policy is
/// ``JournalRepairPolicy/truncate``: then recovery keeps every record before this spot, cuts the
/// segment there (`ftruncate` + sync), and renames any later segments with a `.corrupt` suffix so
/// nothing is replayed past a hole.
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

    /// Path of the damaged segment (for a missing segment, the first segment after the hole).
    public var segment: String
    /// Byte offset in ``segment`` where the damage starts (and, once repaired, where it ends).
    public var offset: Int
    /// What was wrong.
    public var problem: Problem
    /// LSN of the last intact record before the damage (0 if there is none).
    public var lastIntactLSN: UInt64
    /// Valid records kept in ``segment`` (before ``offset``).
    public var recordsKeptInSegment: UInt64
    /// Whether this is a torn tail: damage at the end of the newest segment with no intact record
    /// after it, which is what a crash in the middle of a write leaves. Only a torn tail is cut
    /// without the ``JournalRepairPolicy/truncate`` policy.
    public var isTornTail: Bool
    /// Intact records found after the damage: resynchronised past it in ``segment``, and in every
    /// later segment. Cutting at the damage loses them.
    public var intactRecordsAfter: UInt64
    /// False when part of what follows the damage could not be read at all (a later segment
    /// with a foreign header or an I/O error), so ``intactRecordsAfter`` is a lower bound.
    public var intactRecordsAfterIsExact: Bool
    /// The highest LSN found anywhere in the journal; ``lastIntactLSN`` when nothing intact
    /// follows the damage.
    public var lastLSNFound: UInt64
    /// Bytes removed from ``segment`` (from ``offset`` to its old end); 0 if nothing was cut.
    public var bytesCut: Int
    /// Where the cut bytes were saved, unless they were a plain torn write at the end of the log.
    public var preservedCopy: String?
    /// Later segments, renamed with a `.corrupt` suffix (new paths), oldest first.
    public var movedAside: [String]

    /// The LSNs a cut at the damage gives up: from the one after ``lastIntactLSN`` to
    /// ``lastLSNFound``; `nil` when no intact record follows the damage (a torn tail).
    public var lostLSNs: ClosedRange<UInt64>? {
        lastLSNFound > lastIntactLSN ? (lastIntactLSN + 1)...lastLSNFound : nil
    }

    /// `"31 intact records after it (up to LSN 45)"`, or `"at least 31 ..."`.
    var recordsAfterDescription: String {
        let count = (intactRecordsAfterIsExact ? "" : "at least ") + "\(intactRecordsAfter) intact record(s)"
        return intactRecordsAfter == 0 ? count + " after it" : count + " after it (up to LSN \(lastLSNFound))"
    }

    /// Where the damage is and what it is: `"<segment> at offset <n>: <problem>, after LSN <n>"`.
    var location: String {
        "\(segment) at offset \(offset): \(problem), after LSN \(lastIntactLSN)"
    }

    public var description: String {
        var text = isTornTail ? "torn tail " : ""
        text += "\(location); \(recordsAfterDescription)"
        text += "; kept \(recordsKeptInSegment) records in the segment, cut \(bytesCut) bytes"
        if let preservedCopy { text += " (saved to \(preservedCopy))" }
        if !movedAside.isEmpty { text += "; moved aside \(movedAside.joined(separator: ", "))" }
        return text
    }
}
