import MessagePack
import ReactorWire

/// A reply waiting in the outbox for the actions socket, for the client behind its routing
/// envelope (the routing id, and the empty delimiter a REQ peer sends).
///
/// An ack (one per action, nearly every reply) stays its three numbers until the loop sends it,
/// packed then into the loop's one header buffer: built as frames, it cost an array for the
/// message, one for its header and a copy of the header's bytes, per action.
///
/// Not nested in the generic outbox: a type nested in a generic type is generic too, and code
/// that is not specialised for the reactor asks the runtime for its metadata on every use.
package enum QueuedReply: Equatable, Sendable {
    /// An `ack` for the DEALER whose routing id this is (a REQ peer's, whose envelope has a
    /// delimiter too, is queued as ``frames(_:)``).
    case ack(routingID: [UInt8], clientSeq: UInt64, actionSeq: UInt64, version: UInt64)
    /// Several acks for a DEALER that reads `acks` messages (``ClientAckBatches``), in order.
    case acks(routingID: [UInt8], [AckBatch.Entry])
    /// Any other reply, envelope first.
    case frames([[UInt8]])
    /// A reply whose last frame is part of a large encoding (a whole state, or a chunk of one
    /// being fetched), lent to libzmq as it is: `head` is the envelope and the reply's header,
    /// `range` the bytes of `last` that leave.
    case lending(head: [[UInt8]], last: EncodedBytes, range: Range<Int>)

    /// The client's routing id.
    package var routingID: [UInt8]? {
        switch self {
        case .ack(let routingID, _, _, _), .acks(let routingID, _): routingID
        case .frames(let frames), .lending(let frames, _, _): frames.first
        }
    }

    /// The routing envelope the reply goes to.
    package var envelope: ArraySlice<[UInt8]> {
        switch self {
        case .ack(let routingID, _, _, _), .acks(let routingID, _): [routingID]
        case .frames(let frames), .lending(let frames, _, _): frames.prefix(frames.count > 1 && frames[1].isEmpty ? 2 : 1)
        }
    }

    /// The reply as the frames that leave, envelope first (a lent last frame copied: for the
    /// paths that refuse a reply, and for tests).
    package func frames(_ writer: HeaderWriter) -> [[UInt8]] {
        switch self {
        case .ack(let routingID, let clientSeq, let actionSeq, let version):
            AuthorityReply.ack(clientSeq: clientSeq, actionSeq: actionSeq, version: version).frames(writer, after: [routingID])
        case .acks(let routingID, let entries):
            AuthorityReply.acks(entries).frames(writer, after: [routingID])
        case .frames(let frames):
            frames
        case .lending(let head, let last, let range):
            head + [last.copy(range)]
        }
    }

    /// The acks it carries, in order (none for any other reply); a REQ peer's ack, queued as
    /// frames, is decoded.
    package var acks: [AckBatch.Entry] {
        switch self {
        case .ack(_, let clientSeq, let actionSeq, let version):
            return [AckBatch.Entry(clientSeq: clientSeq, actionSeq: actionSeq, version: version)]
        case .acks(_, let entries):
            return entries
        case .lending:
            return []
        case .frames:
            guard case .ack(let clientSeq, let actionSeq, let version)? = try? reply() else { return [] }
            return [AckBatch.Entry(clientSeq: clientSeq, actionSeq: actionSeq, version: version)]
        }
    }

    /// The reply without its envelope, decoded (for tests and tools that read the outbox).
    package func reply() throws(ProtocolError) -> AuthorityReply {
        switch self {
        case .ack(_, let clientSeq, let actionSeq, let version):
            return .ack(clientSeq: clientSeq, actionSeq: actionSeq, version: version)
        case .acks(_, let entries):
            return .acks(entries)
        case .frames(let frames):
            return try AuthorityReply(frames: Array(frames.dropFirst(envelope.count)))
        case .lending(let head, let last, let range):
            return try AuthorityReply(frames: Array(head.dropFirst(envelope.count)) + [last.copy(range)])
        }
    }
}
