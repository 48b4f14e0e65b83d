import MessagePack

/// The body of an `acks` message: several acks for one client in one frame, each
/// `[client_seq, action_seq, version]`, in the order the authority accepted the actions. Packed
/// and read with msgpack-c's calls.
///
/// Why: an ack was a ZeroMQ message of its own (a routing frame and a header through the
/// authority's I/O thread, the kernel and the client's), so a pipelining client cost every
/// process a message per action; the acks a turn owes one client now travel together. Sent
/// only to a client that named ``ClientFeature/acks`` in a `features` request.
package enum AckBatch {
    /// One ack of a batch: the fields of ``AuthorityReply/ack(clientSeq:actionSeq:version:)``.
    package struct Entry: Sendable, Equatable {
        package var clientSeq: UInt64
        package var actionSeq: UInt64
        package var version: UInt64

        package init(clientSeq: UInt64, actionSeq: UInt64, version: UInt64) {
            self.clientSeq = clientSeq
            self.actionSeq = actionSeq
            self.version = version
        }
    }

    /// Bytes a body holds at most: a client reads frames of at least this size (the Swift
    /// client's limit is its largest action plus 4 KiB), and a batch this long already makes
    /// the per-message cost a few percent of the per-ack one.
    package static let maxBodyBytes = 4_096
    /// The bytes an entry adds to a body, at most: array header and three integers.
    package static let maxEntryBytes = 1 + 9 + 9 + 9
    /// A body's own array header, at most.
    package static let bodyHeaderBytes = 5
    /// The most acks one body holds.
    package static let maxCount = (maxBodyBytes - bodyHeaderBytes) / maxEntryBytes

    /// Packs `entries` into `writer`, after what it holds.
    package static func pack(_ entries: [Entry], into writer: MessagePackWriter) {
        writer.packArrayHeader(entries.count)
        for entry in entries {
            writer.packArrayHeader(3)
            writer.packUInt(entry.clientSeq)
            writer.packUInt(entry.actionSeq)
            writer.packUInt(entry.version)
        }
    }

    /// The acks in `frame`, which must hold exactly `count` (what the header says).
    /// - Throws: `malformed`, naming what is wrong, for any other shape.
    package static func read(_ frame: [UInt8], count: UInt64) throws(ProtocolError) -> [Entry] {
        try WireBody.elements(of: frame, count: count, what: "acks", shape: "[client_seq, action_seq, version]") { element in
            guard element.arrayCount == 3, let clientSeq = element.element(at: 0).uint, clientSeq >= 1,
                  let actionSeq = element.element(at: 1).uint, let version = element.element(at: 2).uint else { return nil }
            return Entry(clientSeq: clientSeq, actionSeq: actionSeq, version: version)
        }
    }
}
