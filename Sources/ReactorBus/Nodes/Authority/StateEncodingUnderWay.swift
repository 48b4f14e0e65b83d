/// An encoding of the authority's state under way off its loop (``StateEncode``, or a snapshot
/// replica's), and who waits for it: the feed, requests for the state, or both.
///
/// Not nested in the generic engine: a type nested in a generic type is generic too, and code
/// that is not specialised for the reactor asks the runtime for its metadata on every use.
struct StateEncodingUnderWay {
    /// The version encoded. One to be made elsewhere takes the state's version when the loop is
    /// asked for it, at the end of the turn (its records journaled through there).
    var version: UInt64
    /// The requests that wait for it.
    var waiting: [PendingStateRequest] = []
    /// The feed publishes it.
    var forFeed: Bool
    /// Made by the loop's snapshot replica (``AuthorityEngine/encodesElsewhere``) rather than from
    /// a copy of the engine's state; `arranged` once the outbox asked the loop for it.
    var elsewhere = false
    var arranged = false
}

/// A request for the current state (a fetch's first chunk, or a whole `snapshot`) that waits for
/// an encoding off the loop.
struct PendingStateRequest {
    /// What the requester is sent: the first chunk of a fetch, or the whole state.
    enum Answer {
        case chunk(offset: UInt64, maxBytes: UInt64)
        case whole
    }

    /// The requester's routing envelope.
    var envelope: ArraySlice<[UInt8]>
    var id: UInt64
    var answer: Answer
    /// The state's version when the request arrived: its answer is of this version or a later
    /// one, so a client that was acknowledged an action sees its effect.
    var atLeast: UInt64
}
