import ReactorWire

/// The acks a turn owes clients that read `acks` messages, gathered into one reply per client
/// (``AckBatch``) at the place in the turn's replies where its first ack was.
///
/// A batch is closed by any other reply to its client (an `error`, a `snapshot`), so replies
/// still arrive in the order the requests were read (``TurnBatches``), and before its body would
/// outgrow ``AckBatch/maxBodyBytes``. A batch of one leaves as a plain `ack`.
struct ClientAckBatches {
    private var batches = TurnBatches<[UInt8], AckBatch.Entry>()

    /// Whether no ack waits to be packed.
    var isEmpty: Bool { batches.isEmpty }

    /// Adds `entry` for the client behind `routingID`: to its open batch when it fits, else to
    /// a new one that takes the next place in `replies` (filled in by ``pack(into:)``).
    mutating func add(_ entry: AckBatch.Entry, for routingID: [UInt8], in replies: inout [QueuedReply]) {
        if batches.add(entry, bytes: AckBatch.maxEntryBytes, for: routingID, slot: replies.count, headerBytes: AckBatch.bodyHeaderBytes,
                       limit: AckBatch.maxBodyBytes) {
            replies.append(.frames([]))
        }
    }

    /// Closes the open batch of the client behind `routingID`: another reply to it follows.
    mutating func close(_ routingID: [UInt8]) {
        batches.close(routingID)
    }

    /// Puts each batch at its place in `replies`. Empties the batches.
    mutating func pack(into replies: inout [QueuedReply]) {
        batches.drain { batch in
            if batch.entries.count == 1, let only = batch.entries.first {
                replies[batch.slot] = .ack(routingID: batch.key, clientSeq: only.clientSeq, actionSeq: only.actionSeq, version: only.version)
            } else {
                replies[batch.slot] = .acks(routingID: batch.key, batch.entries)
            }
        }
    }
}
