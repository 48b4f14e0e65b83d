import Foundation
import SystemCalls
import ZeroMQ

/// A state being encoded off the authority's loop for a `snapshot_chunk` fetch, and what came of it.
///
/// Encoding a large state takes its time (about 0.4 s for a 64 MiB `catalog` state), and on the
/// loop that time is a pause for every client and worker. The engine copies the state (Swift's
/// copy on write makes that a reference), hands the copy here with the version and action
/// sequence it is at, and answers the requests that wait for it once the bytes are back: the
/// reply names that version, and the requester follows the feed from there as after any fetch.
struct FetchEncode: Sendable {
    /// The state's version and action sequence when it was copied.
    var version: UInt64
    var actionSeq: UInt64
    /// Encodes the copied state; runs on another thread.
    var encode: @Sendable () throws -> [UInt8]

    /// The encoding of one ``FetchEncode``, back on the loop.
    struct Done: Sendable {
        var version: UInt64
        var actionSeq: UInt64
        var result: Result<[UInt8], any Error>
    }

    /// Runs the encoding on a new thread and posts its outcome to `mailbox`, whose readability
    /// wakes the loop.
    static func start(_ request: FetchEncode, reportingTo mailbox: Mailbox<Done>) {
        Thread.detachNewThread {
            ThreadName.setCurrent("fetch-encode")
            let result = Result { try request.encode() }
            mailbox.post(Done(version: request.version, actionSeq: request.actionSeq, result: result))
        }
    }
}
