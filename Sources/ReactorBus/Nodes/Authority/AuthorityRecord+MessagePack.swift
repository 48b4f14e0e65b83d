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
    init(journalBytes bytes: [UInt8], decoder: MessagePackDecoder) throws {
        if let record = Self.readCommonShape(bytes) {
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

    /// The record when `bytes` hold exactly the shape ``pack(into:)`` writes, else `nil`.
    private static func readCommonShape(_ bytes: [UInt8]) -> AuthorityRecord? {
        guard let value = try? MessagePackValue(unpacking: bytes), case .map(let outer) = value, outer.count == 1,
              case .string(let name) = outer[0].key, case .map(let fields) = outer[0].value else { return nil }
        let body = Fields(fields)
        switch name {
        case "accepted":
            guard fields.count == 3, let client = body.string("client"), let seq = body.uint("clientSeq"),
                  let action = body.bytes("action") else { return nil }
            return .accepted(client: client, clientSeq: seq, action: action)
        case "emitted":
            guard fields.count == 3, let job = body.job("job"), let index = body.uint32("emitIndex"),
                  let mutation = body.bytes("mutation") else { return nil }
            return .emitted(job: job, emitIndex: index, mutation: mutation)
        case "completed":
            guard fields.count == 2, let job = body.job("job"), let count = body.uint32("emitCount") else { return nil }
            return .completed(job: job, emitCount: count)
        case "subscriptionEvent":
            guard fields.count == 3, let run = body.uint("run"), let index = body.uint("index"),
                  let action = body.bytes("action") else { return nil }
            return .subscriptionEvent(run: run, index: index, action: action)
        default:
            // Rare records (failures, schema markers, the start) take the Codable path.
            return nil
        }
    }

    /// The entries of a record's inner map, looked up by key.
    private struct Fields {
        let entries: [(key: MessagePackValue, value: MessagePackValue)]

        init(_ entries: [(key: MessagePackValue, value: MessagePackValue)]) { self.entries = entries }

        /// The value under `key`, when exactly one entry has it.
        func value(_ key: String) -> MessagePackValue? {
            var found: MessagePackValue?
            for entry in entries {
                guard case .string(let name) = entry.key, name == key else { continue }
                if found != nil { return nil }
                found = entry.value
            }
            return found
        }

        func string(_ key: String) -> String? {
            guard case .string(let text)? = value(key) else { return nil }
            return text
        }

        func uint(_ key: String) -> UInt64? {
            guard case .uint(let number)? = value(key) else { return nil }
            return number
        }

        func uint32(_ key: String) -> UInt32? {
            uint(key).flatMap { UInt32(exactly: $0) }
        }

        func bytes(_ key: String) -> [UInt8]? {
            guard case .binary(let data)? = value(key) else { return nil }
            return data
        }

        func job(_ key: String) -> JobID? {
            guard case .map(let entries)? = value(key), entries.count == 2 else { return nil }
            let job = Fields(entries)
            guard let actionSeq = job.uint("actionSeq"), let effectIndex = job.uint32("effectIndex") else { return nil }
            return JobID(actionSeq: actionSeq, effectIndex: effectIndex)
        }
    }
}
