/// What opening a ``Journal`` found: how much of the log is intact and whether anything was cut.
///
/// Log it at startup. A report with ``damage`` normally shows a torn tail
/// (``JournalDamage/isTornTail``) of unacknowledged records, which a crash leaves. Damage anywhere
/// else means the disk changed data after it was written; it appears here only when the journal
/// was opened with ``JournalRepairPolicy/truncate`` (otherwise opening throws
/// ``PersistenceError/journalDamaged(_:)``), and ``JournalDamage/lostLSNs`` says what was lost.
package struct JournalRecoveryReport: Hashable, Sendable, CustomStringConvertible {
    /// Segment files read (including a damaged one, excluding ones moved aside).
    package var segmentsScanned: Int
    /// Valid records kept across all segments.
    package var recordsKept: UInt64
    /// LSN of the oldest record still on disk (or of the next one, if none is).
    package var firstLSN: UInt64
    /// LSN of the last valid record, 0 if there is none.
    package var lastLSN: UInt64
    /// The first damage found and cut, `nil` if the log was intact.
    package var damage: JournalDamage?

    /// True when nothing had to be cut or moved aside.
    package var isClean: Bool { damage == nil }

    package var description: String {
        let range = recordsKept == 0 ? "no records" : "\(recordsKept) records (LSN \(firstLSN)...\(lastLSN))"
        let head = "journal: \(segmentsScanned) segments, \(range)"
        guard let damage else { return head + ", clean" }
        return head + ", repaired damage: \(damage)"
    }
}
