import MessagePack
import ReactorCore

/// Journal records packed and read with msgpack-c's own calls: a record is a fixed-shape
/// envelope around the app's bytes, written once per action (and read once per record by every
/// standby and at recovery), so going through `Codable` cost a primary and, more, a standby a
/// large share of their time (keyed containers, `allKeys`, generic metadata at run time).
///
/// The bytes are exactly those of the synthesised `Codable` conformance through
/// ``MessagePackEncoder`` (a map with one key, the case's name, whose value maps each associated
/// value's label to its value, in declaration order), so journals written by either are the same
/// and both read each other's; `AuthorityRecordMessagePackTests` checks it byte for byte.
extension AuthorityRecord {
    /// Packs the record into `writer` (after what it holds).
    func pack(into writer: MessagePackWriter) {
        writer.packMapHeader(1)
        switch self {
        case .accepted(let client, let clientSeq, let action):
            writer.packString("accepted")
            writer.packMapHeader(3)
            writer.packString("client")
            writer.packString(client)
            writer.packString("clientSeq")
            writer.packUInt(clientSeq)
            writer.packString("action")
            writer.packBinary(action)
        case .emitted(let job, let emitIndex, let mutation):
            writer.packString("emitted")
            writer.packMapHeader(3)
            writer.packString("job")
            Self.pack(job, into: writer)
            writer.packString("emitIndex")
            writer.packUInt(UInt64(emitIndex))
            writer.packString("mutation")
            writer.packBinary(mutation)
        case .completed(let job, let emitCount):
            writer.packString("completed")
            writer.packMapHeader(2)
            writer.packString("job")
            Self.pack(job, into: writer)
            writer.packString("emitCount")
            writer.packUInt(UInt64(emitCount))
        case .failed(let job, let failure):
            writer.packString("failed")
            writer.packMapHeader(2)
            writer.packString("job")
            Self.pack(job, into: writer)
            writer.packString("failure")
            writer.packMapHeader(2)
            writer.packString("message")
            writer.packString(failure.message)
            writer.packString("attempts")
            writer.packInt(Int64(failure.attempts))
        case .schema(let version):
            writer.packString("schema")
            writer.packMapHeader(1)
            writer.packString("version")
            writer.packUInt(UInt64(version))
        case .started:
            writer.packString("started")
            writer.packMapHeader(0)
        case .subscriptionEvent(let run, let index, let action):
            writer.packString("subscriptionEvent")
            writer.packMapHeader(3)
            writer.packString("run")
            writer.packUInt(run)
            writer.packString("index")
            writer.packUInt(index)
            writer.packString("action")
            writer.packBinary(action)
        }
    }

    /// The record in `bytes`, read through msgpack-c; a record of another shape (damaged, or
    /// written by a later build) goes through `decoder`, which names what is wrong.
    ///
    /// An `accepted` record whose client is `client` takes that `String` rather than a new one:
    /// a replay reads a client's id in record after record.
    init(journalBytes bytes: [UInt8], decoder: MessagePackDecoder, client: String? = nil) throws {
        if let record = Self.readCommonShape(bytes, client: client) {
            self = record
        } else {
            self = try decoder.decode(AuthorityRecord.self, from: bytes)
        }
    }

    private static func pack(_ job: JobID, into writer: MessagePackWriter) {
        writer.packMapHeader(2)
        writer.packString("actionSeq")
        writer.packUInt(job.actionSeq)
        writer.packString("effectIndex")
        writer.packUInt(UInt64(job.effectIndex))
    }

    /// The record when `bytes` hold exactly the shape ``pack(into:)`` writes, else `nil`. Read
    /// where msgpack-c unpacked it: only the client's name and the app's bytes are copied out.
    private static func readCommonShape(_ bytes: [UInt8], client known: String?) -> AuthorityRecord? {
        try? MessagePackView.read(bytes) { root -> AuthorityRecord? in
            guard root.mapCount == 1 else { return nil }
            let name = root.key(at: 0), body = root.value(at: 0)
            if name.isString("accepted") {
                guard body.mapCount == 3, let client = body.value(forKey: "client")?.string(reusing: known), let seq = body.value(forKey: "clientSeq")?.uint,
                      let action = body.value(forKey: "action")?.binary else { return nil }
                return .accepted(client: client, clientSeq: seq, action: action)
            }
            if name.isString("emitted") {
                guard body.mapCount == 3, let job = job(body.value(forKey: "job")), let index = uint32(body.value(forKey: "emitIndex")),
                      let mutation = body.value(forKey: "mutation")?.binary else { return nil }
                return .emitted(job: job, emitIndex: index, mutation: mutation)
            }
            if name.isString("completed") {
                guard body.mapCount == 2, let job = job(body.value(forKey: "job")), let count = uint32(body.value(forKey: "emitCount")) else { return nil }
                return .completed(job: job, emitCount: count)
            }
            if name.isString("subscriptionEvent") {
                guard body.mapCount == 3, let run = body.value(forKey: "run")?.uint, let index = body.value(forKey: "index")?.uint,
                      let action = body.value(forKey: "action")?.binary else { return nil }
                return .subscriptionEvent(run: run, index: index, action: action)
            }
            // Rare records (failures, schema markers, the start) take the Codable path.
            return nil
        }
    }

    private static func uint32(_ view: MessagePackView?) -> UInt32? {
        view?.uint.flatMap { UInt32(exactly: $0) }
    }

    private static func job(_ view: MessagePackView?) -> JobID? {
        guard let view, view.mapCount == 2, let actionSeq = view.value(forKey: "actionSeq")?.uint,
              let effectIndex = uint32(view.value(forKey: "effectIndex")) else { return nil }
        return JobID(actionSeq: actionSeq, effectIndex: effectIndex)
    }
}
