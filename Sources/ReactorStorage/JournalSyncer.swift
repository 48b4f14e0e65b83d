import Foundation
import Glibc
import Synchronization
import SystemCalls

/// The journal's disk thread: runs the `fdatasync` of group commits and deletes compacted
/// segments, so that the authority's loop keeps reading, answering pings and sending heartbeats
/// while the disk works.
///
/// The loop writes a batch's records to the kernel (``Journal/write()``), hands the syncer a
/// ``Journal/SyncRequest`` and holds the batch's acks until an ``Outcome`` says the LSN is
/// durable. Requests that arrive while a sync runs are coalesced into one: the next `fdatasync`
/// of a segment covers every byte written to it before the call, so the newest request speaks
/// for all older ones (a rotation syncs the finished segment itself before the next one starts).
/// Each sync runs through the journal's ``JournalSyncGate``, which fails the journal at once if
/// it fails. Segments the journal has let go of (``Journal/detachSegments(through:)``) are
/// deleted with ``remove(_:in:)``, oldest first, and the directory synced; the first deletion
/// that fails holds back every later one until it is tried again, so the files left behind are
/// always the journal's oldest segments (which recovery accepts) and never leave a gap (which it
/// refuses).
///
/// Outcomes are handed to `deliver` on the syncer's thread, in the order the work was done; the
/// loop passes a closure that posts to a mailbox its poller waits on. A failed sync is delivered
/// once and ends the syncing: later sync requests are dropped (the journal refuses further work
/// anyway). The thread is started by `init` and ends after ``stop()``, which the owner must call
/// (the thread holds the syncer).
package final class JournalSyncer: Sendable {
    /// What the thread did.
    package enum Outcome: Sendable, Equatable {
        /// Every record through `lsn` is on disk; the `fdatasync` took `elapsed`.
        case synced(lsn: UInt64, elapsed: Duration)
        /// The `fdatasync` for `lsn` failed: the journal must be failed.
        case syncFailed(lsn: UInt64, PersistenceError)
        /// Compacted segments deleted, oldest first, and the directory synced; or, with an error,
        /// the ones deleted before one failed: that one and every later one stay (they hold only
        /// records a snapshot covers) and are tried again, in order, at the next
        /// ``JournalSyncer/remove(_:in:)`` or sync.
        case removed([String], PersistenceError?)
    }

    private struct State {
        var waiting: Journal.SyncRequest?
        /// Segment files to delete, oldest first, and the journal directory they are in.
        var removals: [String] = []
        var directory = ""
        /// A deletion failed: the files from it on wait for the next request or sync, rather
        /// than being tried again at once, in a loop, on a disk that keeps refusing.
        var removalsHeld = false
        var stopping = false
        var finished = false
        var failed = false
    }

    private enum Work {
        case sync(Journal.SyncRequest)
        case remove([String], directory: String)
    }

    private let shared = ThreadHandoff(State())

    /// Starts the syncer thread; `deliver` is called on it with each outcome. `sync` replaces
    /// `fdatasync(fd)` (for tests that need a slow or failing disk).
    package init(name: String, sync: (@Sendable (_ fd: Int32, _ path: String) throws -> Void)? = nil,
                 deliver: @escaping @Sendable (Outcome) -> Void) {
        let thread = Thread { [self] in
            ThreadName.setCurrent(name)
            while let work = nextWork() {
                switch work {
                case .sync(let request):
                    let start = ContinuousClock.now
                    let outcome: Outcome
                    do throws(PersistenceError) {
                        // Through the journal's gate: the failure is recorded there (and fails the
                        // journal) before it is posted, so no later commit can sync over it.
                        try request.gate.run(path: request.path) {
                            if let sync { try sync(request.fd, request.path) } else { try PosixFile.sync(request.fd, path: request.path) }
                        }
                        outcome = .synced(lsn: request.lsn, elapsed: ContinuousClock.now - start)
                    } catch {
                        outcome = .syncFailed(lsn: request.lsn, error)
                        locked { $0.failed = true }
                    }
                    PosixFile.close(request.fd)
                    deliver(outcome)
                case .remove(let paths, let directory):
                    deliver(removeInOrder(paths, in: directory))
                }
            }
            locked { state in
                if let waiting = state.waiting { PosixFile.close(waiting.fd) }
                state.waiting = nil
                state.finished = true
            }
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Queues `request`, replacing (and closing) one that has not started yet. After a failed
    /// sync or ``stop()`` the request is dropped and its descriptor closed.
    package func submit(_ request: Journal.SyncRequest) {
        let dropped = locked { state -> Int32? in
            guard !state.stopping, !state.failed else { return request.fd }
            let older = state.waiting?.fd
            state.waiting = request
            return older
        }
        if let dropped { PosixFile.close(dropped) }
    }

    /// Queues the deletion of segment files the journal no longer lists (oldest first, all in
    /// `directory`, the journal's), after any whose deletion failed before, which it also has
    /// tried again; then a sync of `directory`.
    package func remove(_ paths: [String], in directory: String) {
        guard !paths.isEmpty else { return }
        locked { state in
            guard !state.stopping else { return }
            state.removals += paths
            state.directory = directory
            state.removalsHeld = false
        }
    }

    /// Lets the work in hand finish, drops a sync not yet started, ends the thread and returns
    /// once it has ended. Deletions already queued are done first, except those a failed one
    /// holds back (they stay on disk: the journal's oldest segments, which recovery reads as
    /// records a snapshot covers). Idempotent.
    package func stop() {
        locked { $0.stopping = true }
        shared.wait { $0.finished ? () : nil }
    }

    /// Blocks the syncer thread until there is work (taking it) or the syncer stops (`nil`).
    /// Syncs come first: acks wait for them. A sync also lets deletions held back by a failed
    /// one be tried again (after it).
    private func nextWork() -> Work? {
        shared.wait { state -> Work?? in
            if !state.stopping, !state.failed, let request = state.waiting {
                state.waiting = nil
                state.removalsHeld = false
                return .some(.sync(request))
            }
            if !state.removalsHeld, !state.removals.isEmpty {
                defer { state.removals = [] }
                return .some(.remove(state.removals, directory: state.directory))
            }
            return state.stopping || state.failed ? .some(nil) : nil
        }
    }

    /// Deletes `paths` oldest first, then syncs `directory`. The first deletion that fails stops
    /// the rest: that file and every later one go back to the front of the queue, held until the
    /// next request or sync, so what stays on disk is always a run of the oldest segments.
    private func removeInOrder(_ paths: [String], in directory: String) -> Outcome {
        for (index, path) in paths.enumerated() {
            do {
                try PosixFile.remove(path)
            } catch {
                let kept = Array(paths[index...])
                locked { state in
                    state.removals = kept + state.removals
                    state.removalsHeld = true
                }
                return .removed(Array(paths[..<index]), error as? PersistenceError ?? .io(operation: "unlink", path: path, errno: EIO))
            }
        }
        do {
            try PosixFile.syncDirectory(directory)
            return .removed(paths, nil)
        } catch {
            return .removed(paths, error as? PersistenceError ?? .io(operation: "fsync", path: directory, errno: EIO))
        }
    }

    private func locked<T: Sendable>(_ body: (inout State) -> T) -> T {
        shared.locked(body)
    }
}
