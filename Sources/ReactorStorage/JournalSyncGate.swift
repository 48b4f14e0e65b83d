import Glibc
import Synchronization

/// Every `fdatasync` of one journal's segments, on whichever thread it runs (the loop's commits
/// and rotations, a ``JournalSyncer``'s group commits), and the first of them that failed.
///
/// Why: Linux reports a writeback error to one sync per open file, and a
/// ``Journal/SyncRequest``'s descriptor is a `dup` of the journal's own. Once the syncer's sync
/// got the error, the loop's next sync of the same file succeeds although the pages it was to
/// write were dropped, and would call records durable that are not. So a failure is recorded here
/// before the syncer posts it, and every later sync of the journal throws it instead of running.
/// The syncs run one at a time, so that none can return success while another, running alongside,
/// takes the error meant for both and has not yet recorded it.
package final class JournalSyncGate: Sendable {
    /// The first failure; locked for the whole of every sync.
    private let first = Mutex<PersistenceError?>(nil)
    /// Set once `first` is: what the journal checks on every append (one atomic load, no lock).
    private let failed = Atomic<Bool>(false)

    package init() {}

    /// Whether a sync of the journal failed, on any thread.
    package var hasFailed: Bool { failed.load(ordering: .acquiring) }

    /// The first sync of the journal that failed, if any.
    package var failure: PersistenceError? { first.withLock { $0 } }

    /// Runs `sync` (an `fdatasync` of the segment at `path`), or throws the failure of an earlier
    /// one without running it. A failure of `sync` is recorded before it is thrown; one that is
    /// not a ``PersistenceError`` becomes `fdatasync`'s `EIO` on `path`.
    package func run(path: String, _ sync: () throws -> Void) throws(PersistenceError) {
        try first.withLock { (failure: inout PersistenceError?) throws(PersistenceError) in
            if let failure { throw failure }
            do {
                try sync()
            } catch {
                let error = error as? PersistenceError ?? .io(operation: "fdatasync", path: path, errno: EIO)
                failure = error
                failed.store(true, ordering: .releasing)
                throw error
            }
        }
    }
}
