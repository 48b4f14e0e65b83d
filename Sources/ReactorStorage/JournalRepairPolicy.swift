import Foundation

/// What opening a ``Journal`` may do about damage that is not a torn tail.
///
/// A torn tail (the end of the newest segment, as a crash in the middle of a write leaves it:
/// a partial record, a bad last record with nothing intact after it, a partial header of the
/// newest segment) holds no acknowledged record and is always cut. Anything else (a bad record
/// with intact records after it, damage in an older segment, a missing segment) means data that
/// was acknowledged changed or vanished after it was written, and cutting there would silently
/// roll acknowledged actions back. So by default opening refuses
/// (``PersistenceError/journalDamaged(_:)``) and changes nothing; an operator who has no backup
/// accepts the loss explicitly with ``truncate``.
public enum JournalRepairPolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Refuse to open a journal damaged anywhere but at its tail; leave every file untouched.
    /// The default.
    case refuse
    /// Cut the journal at the damage (the cut bytes are saved beside the segment as
    /// `<segment>.cut-at-<offset>.corrupt`, later segments are renamed `<name>.corrupt`) and open
    /// it; the records after the damage are lost and reported in ``Journal/recoveryReport``.
    case truncate

    /// Parses `refuse` or `truncate` (case-insensitive, surrounding spaces ignored); `nil` for
    /// anything else.
    public init?(_ text: String) {
        guard let policy = JournalRepairPolicy(rawValue: text.trimmingCharacters(in: .whitespaces).lowercased()) else {
            return nil
        }
        self = policy
    }

    /// The policy's name as accepted by ``init(_:)``.
    public var description: String { rawValue }
}
