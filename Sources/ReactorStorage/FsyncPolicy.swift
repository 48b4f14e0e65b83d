import Foundation

/// When the journal forces its writes to stable storage with `fdatasync(2)`.
///
/// Every policy writes committed records to the kernel with `write(2)` before ``Journal/commit()``
/// returns, so **a process crash loses nothing** that was committed, under any policy: the kernel
/// still holds the data and writes it back. The policies differ only in what a **power failure
/// or kernel crash** can lose:
///
/// | policy    | fsyncs                         | lost on power failure                                  |
/// |-----------|--------------------------------|--------------------------------------------------------|
/// | `always`  | one per record (caller commits after each append) | nothing that was acknowledged       |
/// | `batch`   | one per commit (the authority: one per group of poll batches, see ``JournalSyncer``) | nothing that was acknowledged, since acks go out after the fsync that covers them |
/// | `none`    | never                          | up to the OS writeback window (about 30 s on Linux by default, `vm.dirty_expire_centisecs`), **including acknowledged actions** |
///
/// `always` and `batch` issue the same system calls per commit; the difference is how often the
/// caller commits. The authority commits after each record under `always` and once per poll
/// batch under `batch`, so `batch` trades a little latency for far fewer fsyncs.
public enum FsyncPolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible, LosslessStringConvertible {
    /// Fsync before each acknowledgement: the caller commits after every record.
    case always
    /// One fsync per poll batch, acknowledgements after it. The default.
    case batch
    /// Never fsync; the OS writes dirty pages back when it likes.
    case none

    /// The policy used when none is configured: ``batch``.
    public static let `default`: FsyncPolicy = .batch

    /// Parses `always`, `batch` or `none` (case-insensitive, surrounding spaces ignored).
    ///
    /// - Throws: ``PersistenceError/invalidFsyncPolicy(_:)`` naming the rejected text.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard let policy = FsyncPolicy(rawValue: trimmed) else {
            throw PersistenceError.invalidFsyncPolicy(text)
        }
        self = policy
    }

    /// Parses like ``init(parsing:)`` but returns `nil` for unknown text.
    public init?(_ description: String) {
        guard let policy = try? FsyncPolicy(parsing: description) else { return nil }
        self = policy
    }

    /// The policy's name as accepted by ``init(parsing:)``.
    public var description: String { rawValue }

    /// Whether ``Journal/commit()`` ends with an fsync.
    var syncsOnCommit: Bool { self != .none }
}
