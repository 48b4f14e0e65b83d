import MessagePack
import ReactorCore

/// The body of a `jobs` message: several jobs for one worker in one frame, each
/// `[action_seq, effect_index, kind, payload]` (the payload a `bin`, the app's effect), in the
/// order the authority assigned them. Packed and read with msgpack-c's calls.
///
/// Why: an action with an effect cost the authority and the worker a ZeroMQ message per job (a
/// routing frame, a header and a payload through both sockets and both I/O threads); the jobs a
/// turn assigns to one worker now travel together. Sent only to a worker that said it reads
/// them (``WorkerFeature/jobs``), after the authority named ``AuthorityFeature/jobBatches``.
package enum JobBatch {
    /// One job of a batch.
    package struct Entry: Sendable, Equatable {
        package var job: JobID
        package var kind: String
        package var payload: [UInt8]

        package init(job: JobID, kind: String, payload: [UInt8]) {
            self.job = job
            self.kind = kind
            self.payload = payload
        }
    }

    /// Bytes a batch's body holds at most before the next job starts another (less when the
    /// worker reads less, ``WorkerMessage/features(_:maxMessageBytes:)``): a worker reads a
    /// message whole, and its jobs wait in it meanwhile.
    package static let maxBodyBytes = 256 * 1_024

    /// The bytes `entry` adds to a body, at most: array header, two integers, the kind's string
    /// header and bytes, the effect's `bin` header and bytes.
    package static func bytes(of entry: Entry) -> Int {
        1 + 9 + 5 + 5 + entry.kind.utf8.count + 5 + entry.payload.count
    }

    /// A body's own array header, at most.
    package static let bodyHeaderBytes = 5

    /// Packs `entries` into `writer`, after what it holds.
    package static func pack(_ entries: [Entry], into writer: MessagePackWriter) {
        writer.packArrayHeader(entries.count)
        for entry in entries {
            writer.packArrayHeader(4)
            writer.packUInt(entry.job.actionSeq)
            writer.packUInt(UInt64(entry.job.effectIndex))
            writer.packString(entry.kind)
            writer.packBinary(entry.payload)
        }
    }

    /// The jobs in `frame`, which must hold exactly `count` (what the header says), read into
    /// `entries` (emptied first, its storage kept for the next batch; empty after a malformed body).
    /// - Throws: `malformed`, naming what is wrong, for any other shape.
    package static func read(_ frame: [UInt8], count: UInt64, into entries: inout [Entry]) throws(ProtocolError) {
        var lastKind: String?
        try WireBody.read(frame, count: count, what: "jobs",
                          shape: "[action_seq, effect_index (u32), kind (at most 1,024 bytes), payload (bin)]", into: &entries) { element in
            guard element.arrayCount == 4, let actionSeq = element.element(at: 0).uint,
                  let effectIndex = element.element(at: 1).uint.flatMap({ UInt32(exactly: $0) }),
                  let kind = element.element(at: 2).string(reusing: lastKind), kind.utf8.count <= 1_024,
                  let payload = element.element(at: 3).binary else { return nil }
            lastKind = kind
            return Entry(job: JobID(actionSeq: actionSeq, effectIndex: effectIndex), kind: kind, payload: payload)
        }
    }
}
