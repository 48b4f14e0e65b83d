import Glibc

/// Everything the journal and the snapshot store can refuse or fail with.
///
/// Each description says what is wrong, where, and what an operator can do about it.
/// Damage that recovery can repair safely (a torn or corrupt journal tail) is not an error: it is
/// repaired and described in a ``JournalRecoveryReport``. The cases here are the ones where
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
        case .noValidSnapshot(let directory, let rejected):
            let list = rejected.map { $0.description }.joined(separator: "; ")
            return "no valid snapshot in \(directory) (\(list)); restore a backup or replay from an uncompacted journal"
        case .staleSnapshot(let lsn, let newest):
            return "snapshot through LSN \(lsn) is older than the newest one on disk (LSN \(newest)); refusing to go back"
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
