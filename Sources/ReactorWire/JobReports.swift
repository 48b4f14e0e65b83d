import MessagePack
import ReactorCore

/// The body of a `reports` message: a worker's `emit`, `done` and `done`-with-mutation reports
/// of one turn in one frame, each `[action_seq, effect_index, "emit" | "done", n, mutation]`
/// (`n` the emit index or the emit count; the mutation a `bin`, or nil for a `done` without
/// one), in the order the worker made them. Packed and read with msgpack-c's calls.
///
/// Why: a job's report was a ZeroMQ message of its own through both sockets and both I/O
/// threads, and the authority looked its worker up once per message; the reports of a turn now
/// travel together. Sent only to an authority that named ``AuthorityFeature/reportBatches``.
package enum JobReports {
    /// Bytes a `reports` message holds at most, header included: the smallest limit an
    /// authority may set (`--max-message-bytes` 1,024), so that no authority refuses a batch
    /// whose reports it would have taken one by one. A report that would not fit goes alone.
    package static let maxMessageBytes = 1_024
    /// What a report adds to a body besides its mutation, at most: array header, two integers,
    /// the kind, an integer and a `bin` header.
    package static let maxEntryOverhead = 1 + 9 + 5 + 5 + 9 + 5
    /// The header of a `reports` message, at most: array header, version, kind, count.
    package static let maxHeaderBytes = 1 + 1 + 8 + 9

    /// The bytes `report` adds to a body, at most.
    package static func bytes(of report: WorkerMessage) -> Int {
        switch report {
        case .emit(_, _, let payload), .doneWithEmit(_, _, let payload): maxEntryOverhead + payload.count
        default: maxEntryOverhead
        }
    }

    /// Packs `reports` (each an `emit`, `done` or `doneWithEmit`; anything else is skipped)
    /// into `writer`, after what it holds.
    package static func pack(_ reports: [WorkerMessage], into writer: MessagePackWriter) {
        writer.packArrayHeader(reports.count { isReport($0) })
        for report in reports {
            switch report {
            case .emit(let job, let index, let payload):
                entry(job, "emit", UInt64(index), payload, into: writer)
            case .done(let job, let count):
                entry(job, "done", UInt64(count), nil, into: writer)
            case .doneWithEmit(let job, let count, let payload):
                entry(job, "done", UInt64(count), payload, into: writer)
            default:
                break
            }
        }
    }

    /// Whether `message` is a report a `reports` message carries.
    package static func isReport(_ message: WorkerMessage) -> Bool {
        switch message {
        case .emit, .done, .doneWithEmit: true
        default: false
        }
    }

    private static func entry(_ job: JobID, _ kind: StaticString, _ number: UInt64, _ payload: [UInt8]?, into writer: MessagePackWriter) {
        writer.packArrayHeader(5)
        writer.packUInt(job.actionSeq)
        writer.packUInt(UInt64(job.effectIndex))
        kind.withUTF8Buffer { writer.packString(utf8: UnsafeRawBufferPointer($0)) }
        writer.packUInt(number)
        if let payload { writer.packBinary(payload) } else { writer.packNil() }
    }

    /// The reports in `frame`, which must hold exactly `count`.
    /// - Throws: `malformed`, naming what is wrong, for any other shape.
    package static func read(_ frame: [UInt8], count: UInt64) throws(ProtocolError) -> [WorkerMessage] {
        try WireBody.elements(of: frame, count: count, what: "reports",
                              shape: "[action_seq, effect_index (u32), \"emit\" or \"done\", index or count (u32), mutation (bin; nil for a done without one)]",
                              report)
    }

    private static func report(_ element: MessagePackView) -> WorkerMessage? {
        guard element.arrayCount == 5, let actionSeq = element.element(at: 0).uint,
              let effectIndex = element.element(at: 1).uint.flatMap({ UInt32(exactly: $0) }),
              let number = element.element(at: 3).uint.flatMap({ UInt32(exactly: $0) }) else { return nil }
        let job = JobID(actionSeq: actionSeq, effectIndex: effectIndex)
        let kind = element.element(at: 2), last = element.element(at: 4)
        if kind.isString("emit") {
            guard let payload = last.binary else { return nil }
            return .emit(job: job, emitIndex: number, payload: payload)
        }
        guard kind.isString("done") else { return nil }
        if last.isNil { return .done(job: job, emitCount: number) }
        guard let payload = last.binary, number >= 1 else { return nil }
        return .doneWithEmit(job: job, emitCount: number, payload: payload)
    }
}
