import Foundation
import MessagePack
import SystemCalls
import ZeroMQ

/// A state being encoded off the authority's loop, for `snapshot_chunk` fetches, whole `snapshot`
/// replies or the feed's next snapshot, and what came of it.
///
/// Encoding a large state takes its time (about 0.4 s for a 64 MiB `catalog` state), and on the
/// loop that time is a pause for every client and worker. The engine copies the state (Swift's
/// copy on write makes that a reference), hands the copy here with the version and action
/// sequence it is at, and uses the bytes once they are back: the requests that waited are
/// answered at that version when they arrived at it or before (the others wait for the next
/// encoding; the requester follows the feed from there as after any fetch), and
/// the feed publishes them as its snapshot of that version, after mutations of later versions
/// perhaps (a snapshot's version says which state it is; observers skip one not above what they
/// hold).
///
/// What remains on the loop is the copy: its next change to the state copies the parts it
/// changes, all of a large dictionary at once (about half the encoding's time for the `catalog`).
struct StateEncode: Sendable {
    /// The state's version and action sequence when it was copied.
    var version: UInt64
    var actionSeq: UInt64
    /// Encodes the copied state; runs on another thread.
    var encode: @Sendable () throws -> EncodedBytes

    /// The encoding of one ``StateEncode``, back on the loop.
    struct Done: Sendable {
        var version: UInt64
        var actionSeq: UInt64
        var result: Result<EncodedBytes, any Error>
        /// How long encoding took, in nanoseconds (the feed's snapshot schedule adapts to it).
        var nanoseconds: UInt64 = 0
    }

    /// Runs the encoding on a new thread and posts its outcome to `mailbox`, whose readability
    /// wakes the loop.
    static func start(_ request: StateEncode, reportingTo mailbox: Mailbox<Done>) {
        Thread.detachNewThread {
            ThreadName.setCurrent("state-encode")
            let start = MonotonicClock.nanoseconds()
            let result = Result { try request.encode() }
            mailbox.post(Done(version: request.version, actionSeq: request.actionSeq, result: result,
                              nanoseconds: MonotonicClock.nanoseconds() - start))
        }
    }
}
