import ReactorWire

/// The jobs a turn assigns to workers that read `jobs` messages, gathered into one message per
/// worker (``JobBatch``) at the place in the turn's worker messages where its first job was.
///
/// A batch is closed by any other message to its worker, so a `cancel` sent after a job still
/// arrives after it (``TurnBatches``), and before its body would outgrow the worker's limit (at
/// most ``JobBatch/maxBodyBytes``); a job that would not fit a batch of its own goes as a `job`.
struct WorkerJobBatches {
    private var batches = TurnBatches<PeerID, JobBatch.Entry>()

    /// Whether no job waits to be packed.
    var isEmpty: Bool { batches.isEmpty }

    /// Adds `entry` for `peer`, whose body frames may hold `limit` bytes: to its open batch when
    /// it fits, else to a new one that takes the next place in `messages` (filled in by
    /// ``pack(into:writer:)``).
    mutating func add(_ entry: JobBatch.Entry, for peer: PeerID, limit: Int, in messages: inout [[[UInt8]]]) {
        if batches.add(entry, bytes: JobBatch.bytes(of: entry), for: peer, slot: messages.count, headerBytes: JobBatch.bodyHeaderBytes,
                       limit: min(limit, JobBatch.maxBodyBytes)) {
            messages.append([])
        }
    }

    /// Closes `peer`'s open batch: another message to `peer` follows it.
    mutating func close(_ peer: PeerID) {
        batches.close(peer)
    }

    /// Puts each batch's frames at its place in `messages` (routing id first): a `jobs` message,
    /// or a plain `job` for a batch of one. Empties the batches.
    mutating func pack(into messages: inout [[[UInt8]]], writer: HeaderWriter) {
        batches.drain { batch in
            let message: AuthorityToWorker
            if batch.entries.count == 1, let only = batch.entries.first {
                message = .job(only.job, kind: only.kind, payload: only.payload)
            } else {
                message = .jobs(batch.entries)
            }
            messages[batch.slot] = [batch.key.bytes] + message.frames(writer)
        }
    }
}
