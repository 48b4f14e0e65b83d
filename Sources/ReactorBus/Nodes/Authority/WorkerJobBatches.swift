import ReactorWire

/// The jobs a turn assigns to workers that read `jobs` messages, gathered into one message per
/// worker (``JobBatch``) at the place in the turn's worker messages where its first job was.
///
/// Order is kept per worker, which is all the protocol promises (each worker has its own
/// connection): a batch is closed by any other message to its worker, so a `cancel` sent after
/// a job still arrives after it, and a job assigned after that `cancel` starts a new batch. A
/// batch also closes before its body would outgrow the worker's limit (at most
/// ``JobBatch/maxBodyBytes``); a job that would not fit a batch of its own goes as a `job`.
struct WorkerJobBatches {
    private struct Batch {
        /// Where the message goes in the turn's worker messages.
        let slot: Int
        let peer: PeerID
        var entries: [JobBatch.Entry]
        var bodyBytes: Int
        let limit: Int
    }

    private var batches: [Batch] = []
    /// The batch each worker's next job joins.
    private var open: [PeerID: Int] = [:]

    /// Whether no job waits to be packed.
    var isEmpty: Bool { batches.isEmpty }

    /// Adds `entry` for `peer`, whose body frames may hold `limit` bytes: to its open batch when
    /// it fits, else to a new one that takes the next place in `messages` (filled in by
    /// ``pack(into:writer:)``).
    mutating func add(_ entry: JobBatch.Entry, for peer: PeerID, limit: Int, in messages: inout [[[UInt8]]]) {
        let bytes = JobBatch.bytes(of: entry)
        if let index = open[peer], batches[index].bodyBytes + bytes <= batches[index].limit {
            batches[index].entries.append(entry)
            batches[index].bodyBytes += bytes
            return
        }
        open[peer] = batches.count
        let cap = min(limit, JobBatch.maxBodyBytes)
        batches.append(Batch(slot: messages.count, peer: peer, entries: [entry], bodyBytes: JobBatch.bodyHeaderBytes + bytes, limit: cap))
        messages.append([])
    }

    /// Closes `peer`'s open batch: another message to `peer` follows it.
    mutating func close(_ peer: PeerID) {
        if !open.isEmpty { open[peer] = nil }
    }

    /// Puts each batch's frames at its place in `messages` (routing id first): a `jobs` message,
    /// or a plain `job` for a batch of one. Empties the batches.
    mutating func pack(into messages: inout [[[UInt8]]], writer: HeaderWriter) {
        for batch in batches {
            let message: AuthorityToWorker
            if batch.entries.count == 1, let only = batch.entries.first {
                message = .job(only.job, kind: only.kind, payload: only.payload)
            } else {
                message = .jobs(batch.entries)
            }
            messages[batch.slot] = [batch.peer.bytes] + message.frames(writer)
        }
        batches.removeAll(keepingCapacity: true)
        open.removeAll(keepingCapacity: true)
    }
}
