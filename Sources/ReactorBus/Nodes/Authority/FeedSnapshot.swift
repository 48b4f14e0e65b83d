import MessagePack

/// A state encoded for the feed off the authority's loop (``StateEncode``), which the loop
/// publishes as the feed's snapshot of its version once the bytes are back (and, with a journal,
/// once the records through that version are durable).
package struct FeedSnapshot: Equatable, Sendable {
    /// The version and action sequence of the state encoded.
    package var version: UInt64
    package var actionSeq: UInt64
    /// The encoding, published without a copy (lent to libzmq).
    package var bytes: EncodedBytes
    /// How long encoding took: the feed's snapshot schedule adapts to it.
    package var encodeNanoseconds: UInt64

    /// What the engine answers when the feed's snapshot is due
    /// (``AuthorityEngine/feedState(_:)``).
    package enum Due: Equatable {
        /// Encoded on the loop, now; `nanoseconds` is `nil` when the bytes were encoded before
        /// (for a request) and cost nothing now.
        case encoded(EncodedBytes, nanoseconds: UInt64?)
        /// Encoded off the loop: the bytes come back later.
        case encoding(Encoding)
    }

    /// A feed snapshot whose bytes come back later, and who encodes it.
    package enum Encoding: Equatable, Sendable {
        /// Being encoded off the loop (``StateEncode``), from the engine's copy of its state at
        /// this version.
        case offLoop(version: UInt64)
        /// To be encoded elsewhere at this version, which the loop arranges (a snapshot replica,
        /// ``AuthorityEngine/encodesElsewhere``) and hands back to
        /// ``AuthorityEngine/finishStateEncode(_:now:)``.
        case elsewhere(version: UInt64)

        /// The version of the state encoded.
        package var version: UInt64 {
            switch self {
            case .offLoop(let version), .elsewhere(let version): version
            }
        }
    }
}
