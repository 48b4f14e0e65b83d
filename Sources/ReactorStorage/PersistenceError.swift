import Glibc

/// Everything the journal and the snapshot store can refuse or fail with.
///
/// Each description says what is wrong, where, and what an operator can do about it.
/// Damage that recovery can repair safely (a torn journal tail, which holds no acknowledged
/// record) is not an error: it is cut and described in a ``JournalRecoveryReport``. The cases here are the ones where
/// continuing could lose or invent data, so the caller must stop.
public enum PersistenceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed. `operation` is the call (`open`, `write`, `fdatasync`, ...).
    case io(operation: String, path: String, errno: Int32)
    /// Another process (or another open journal in this process) holds `DIR/LOCK`.
    case locked(directory: String, pid: Int32?)
    /// A segment or snapshot has a format version this build does not understand.
    case unsupportedFormat(version: UInt32, file: String)
    /// A segment or snapshot was written by a different application.
    case appMismatch(expected: String, found: String, file: String)
    /// A journal segment does not start with the journal's magic bytes.
    case notAJournalSegment(file: String)
    /// `append` was given a payload over the journal's `maxRecordBytes`.
    case recordTooLarge(size: Int, limit: Int)
    /// An initializer argument is out of range.
    case invalidConfiguration(String)
    /// ``FsyncPolicy/init(parsing:)`` got something other than `always`, `batch` or `none`.
    case invalidFsyncPolicy(String)
    /// The journal was used after ``Journal/close()``.
    case closed(directory: String)
    /// An earlier write or sync failed; the journal refuses further work until it is reopened.
    indirect case journalFailed(directory: String, cause: PersistenceError)
    /// Replay was asked to start before the oldest record still on disk (it was compacted away).
    case journalGap(requestedAfter: UInt64, oldestAvailable: UInt64, directory: String)
    /// A record that passed recovery no longer passes its checks when read back.
    case damagedRecord(file: String, offset: Int, problem: String)
    /// The journal is damaged somewhere other than its torn tail (a bad record with intact
    /// records after it, damage in an older segment, a missing segment): cutting there would roll
    /// acknowledged records back, so opening refused and changed nothing. The damage says where,
    /// what, and how many intact records lie after it.
    case journalDamaged(JournalDamage)
    /// The newest valid snapshot covers records the journal no longer has (its end was lost, e.g.
    /// to a power failure under the `none` fsync policy, or cut by a repair): continuing would
    /// number new records with LSNs the snapshot already covers. The truncate repair policy
    /// continues the journal after the snapshot instead (``Journal/continueAfter(_:)``).
    case snapshotBeyondJournal(snapshotLSN: UInt64, journalLastLSN: UInt64, directory: String)
    /// Snapshot files exist but none passes its checks (each was moved aside as `.corrupt`).
    case noValidSnapshot(directory: String, rejected: [SnapshotRejection])
    /// A snapshot older than the newest one on disk was offered.
    case staleSnapshot(lsn: UInt64, newest: UInt64)

    public var description: String {
        switch self {
        case .io(let operation, let path, let code):
            return "\(operation) failed on \(path): \(Self.describe(errno: code)) (errno \(code))"
        case .locked(let directory, let pid):
            let owner = pid.map { "another authority (pid \($0))" } ?? "another authority"
            return "data directory \(directory) is locked by \(owner); stop it or use another directory"
        case .unsupportedFormat(let version, let file):
            return "\(file) has format version \(version), this build reads version 1 only; "
                + "open it with the build that wrote it"
        case .appMismatch(let expected, let found, let file):
            return "\(file) belongs to app \"\(found)\", not \"\(expected)\"; "
                + "point this app at its own data directory"
        case .notAJournalSegment(let file):
            return "\(file) is not a journal segment (bad magic bytes); move it out of the journal directory"
        case .recordTooLarge(let size, let limit):
            return "record of \(size) bytes exceeds the limit of \(limit) bytes; raise maxRecordBytes or split the event"
        case .invalidConfiguration(let detail):
            return "invalid configuration: \(detail)"
        case .invalidFsyncPolicy(let text):
            return "unknown fsync policy \"\(text)\"; use always, batch or none"
        case .closed(let directory):
            return "journal in \(directory) is closed; open a new Journal"
        case .journalFailed(let directory, let cause):
            return "journal in \(directory) stopped after an earlier failure (\(cause)); "
                + "reopen it to recover what reached the disk"
        case .journalGap(let after, let oldest, let directory):
            return "cannot replay \(directory) after LSN \(after): records before \(oldest) were compacted away; "
                + "start from a snapshot covering at least LSN \(oldest - 1)"
        case .damagedRecord(let file, let offset, let problem):
            return "record at offset \(offset) of \(file) is damaged (\(problem)); reopen the journal to recover"
        case .journalDamaged(let damage):
            var text = "journal damaged before its end: \(damage.location); \(damage.recordsAfterDescription); "
                + "refusing to start, nothing was changed. Restore the data directory from a backup, or accept the loss "
                + "with the truncate repair policy (reactor-node authority --repair truncate), which cuts the journal there"
            if let lost = damage.lostLSNs {
                text += " and loses \(lost.count) record(s) (LSN \(lost.lowerBound)...\(lost.upperBound))"
            }
            return text
        case .snapshotBeyondJournal(let snapshot, let last, let directory):
            return "the newest snapshot in \(directory) covers the journal through LSN \(snapshot), but the journal ends at LSN \(last); "
                + "refusing to start, since new records would reuse LSNs the snapshot covers. Restore the data directory from a backup, "
                + "or continue from the snapshot with the truncate repair policy (reactor-node authority --repair truncate)"
        case .noValidSnapshot(let directory, let rejected):
            let list = rejected.map { $0.description }.joined(separator: "; ")
            return "no valid snapshot in \(directory) (\(list)); restore a backup or replay from an uncompacted journal"
        case .staleSnapshot(let lsn, let newest):
            return "snapshot through LSN \(lsn) is older than the newest one on disk (LSN \(newest)); refusing to go back"
        }
    }

    /// Whether this error means data on disk is damaged or missing (as opposed to a busy
    /// directory, a foreign file, an I/O failure or a wrong argument): continuing would lose or
    /// invent acknowledged data, and restarting will not help.
    public var isDataDamage: Bool {
        switch self {
        case .journalDamaged, .journalGap, .damagedRecord, .noValidSnapshot, .snapshotBeyondJournal: true
        case .journalFailed(_, let cause): cause.isDataDamage
        case .io, .locked, .unsupportedFormat, .appMismatch, .notAJournalSegment, .recordTooLarge,
             .invalidConfiguration, .invalidFsyncPolicy, .closed, .staleSnapshot: false
        }
    }

    static func describe(errno code: Int32) -> String {
        guard let text = strerror(code) else { return "unknown error" }
        return String(cString: text)
    }
}

/// The journal's name for ``PersistenceError``: the journal and the snapshot store share one
/// error type so the authority handles storage failures in one place.
public typealias JournalError = PersistenceError
