import MessagePack
import ReactorCore

/// What a client sends to the authority's actions socket.
package enum ClientMessage: Sendable, Equatable {
    /// An action, numbered by the client for idempotent retry; the payload is the app's action.
    case action(clientID: String, clientSeq: UInt64, payload: [UInt8])
    /// A request for the current snapshot.
    case snapshot(requestID: UInt64)
    /// A liveness check.
    case ping(requestID: UInt64)
    /// A request for the authority's counters.
    case stats(requestID: UInt64)
    /// A request for `maxBytes` bytes at `offset` of the state's encoding at `version`; `nil`
    /// asks for the current state, from offset 0 (docs/PROTOCOL.md, "Snapshots in chunks").
    case snapshotChunk(requestID: UInt64, version: UInt64?, offset: UInt64, maxBytes: UInt64)
    /// What the client reads beyond every release's replies (``ClientFeature``), for its
    /// connection; answered with the authority's own (``AuthorityReply/features(requestID:features:)``).
    case features(requestID: UInt64, features: [String])

    /// The longest client id accepted.
    package static let maxClientIDBytes = 64

    /// Decodes the frames after the routing id.
    package init(frames: [[UInt8]]) throws(ProtocolError) {
        try self.init(frames: frames[...])
    }

    /// Decodes the frames after the routing id, as a slice of the message received.
    ///
    /// - Parameter clientID: an action's `client_id` seen before (the previous action's): when
    ///   the header carries the same bytes, the message holds this `String` rather than a new one.
    package init(frames: ArraySlice<[UInt8]>, reusingClientID clientID: String? = nil) throws(ProtocolError) {
        guard let first = frames.first else { throw .malformed("empty message") }
        self = try WireHeader.read(first) { header throws(ProtocolError) -> Self in
            switch header.kind {
            case "action":
                guard frames.count == 2 else { throw .malformed("action needs a header and a payload frame, got \(frames.count) frames") }
                try header.expect(fields: 2)
                let client = try header.string(0, "client_id", maxBytes: Self.maxClientIDBytes, reusing: clientID)
                guard !client.isEmpty else { throw .malformed("action.client_id must not be empty") }
                let seq = try header.uint(1, "client_seq")
                guard seq >= 1 else { throw .malformed("action.client_seq must be at least 1") }
                return .action(clientID: client, clientSeq: seq, payload: frames[frames.startIndex + 1])
            case "snapshot_chunk":
                guard frames.count == 1 else { throw .malformed("snapshot_chunk is one frame, got \(frames.count)") }
                try header.expect(fields: 4)
                let id = try header.uint(0, "request_id")
                let version = try header.optionalUInt(1, "version")
                let offset = try header.uint(2, "offset")
                let maxBytes = try header.uint(3, "max_bytes")
                guard maxBytes >= 1 else { throw .malformed("snapshot_chunk.max_bytes must be at least 1") }
                guard version != nil || offset == 0 else { throw .malformed("snapshot_chunk without a version starts at offset 0") }
                return .snapshotChunk(requestID: id, version: version, offset: offset, maxBytes: maxBytes)
            case "features":
                guard frames.count == 1 else { throw .malformed("features is one frame, got \(frames.count)") }
                try header.expect(fields: 2)
                return .features(requestID: try header.uint(0, "request_id"), features: try header.strings(1, "features"))
            case "snapshot", "ping", "stats":
                guard frames.count == 1 else { throw .malformed("\(header.kind) is one frame, got \(frames.count)") }
                try header.expect(fields: 1)
                let id = try header.uint(0, "request_id")
                return header.kind == "snapshot" ? .snapshot(requestID: id) : header.kind == "ping" ? .ping(requestID: id) : .stats(requestID: id)
            default:
                throw ProtocolError(.unknownKind, "unknown kind '\(header.kind)' on the actions socket")
            }
        }
    }

    /// The `client_seq` or `request_id` of a message that was refused, so that the error names
    /// it: the first unsigned integer after the kind in the header, whatever the version or kind
    /// (for `action` that is `client_seq`, for requests `request_id`). 0 when there is none, or
    /// the header is not a MessagePack array.
    package static func reference(in frames: some Collection<[UInt8]>) -> UInt64 {
        guard let first = frames.first, case .array(let items)? = try? MessagePackValue(unpacking: first), items.count > 2 else { return 0 }
        for item in items.dropFirst(2) {
            if case .uint(let value) = item { return value }
        }
        return 0
    }

    /// The frames to send (without a routing id).
    package func frames(_ writer: HeaderWriter) -> [[UInt8]] {
        switch self {
        case .action(let client, let seq, let payload):
            [writer.header("action", { $0.packString(client); $0.packUInt(seq) }, count: 2), payload]
        case .snapshot(let id):
            [writer.header("snapshot", { $0.packUInt(id) }, count: 1)]
        case .ping(let id):
            [writer.header("ping", { $0.packUInt(id) }, count: 1)]
        case .stats(let id):
            [writer.header("stats", { $0.packUInt(id) }, count: 1)]
        case .snapshotChunk(let id, let version, let offset, let maxBytes):
            [writer.header("snapshot_chunk", { w in
                w.packUInt(id)
                if let version { w.packUInt(version) } else { w.packNil() }
                w.packUInt(offset); w.packUInt(maxBytes)
            }, count: 4)]
        case .features(let id, let features):
            [writer.header("features", { $0.packUInt(id); $0.packStrings(features) }, count: 2)]
        }
    }
}

/// What the authority answers on the actions socket.
package enum AuthorityReply: Sendable, Equatable {
    /// The action `clientSeq` was accepted as `actionSeq`; `version` is after its sync mutations.
    case ack(clientSeq: UInt64, actionSeq: UInt64, version: UInt64)
    /// The state at `version`; the payload is the app's state.
    case snapshot(requestID: UInt64, version: UInt64, actionSeq: UInt64, app: String, payload: [UInt8])
    /// The answer to a ping. `startID` is a random number the authority draws once per process
    /// start, so a client can tell that the authority restarted (and lost what was in its socket
    /// buffers); 0 from an authority that predates the field. `app` is the app the authority
    /// serves, so a client can refuse to send one app's actions to another; empty from an
    /// authority that predates the field. `schema` is the app's schema version the authority
    /// speaks and `compatible` the other versions it accepts from peers (1 and none from an
    /// authority that predates the fields).
    case pong(requestID: UInt64, version: UInt64, startID: UInt64, app: String, schema: UInt32 = 1, compatible: [UInt32] = [], term: UInt64? = nil)
    /// The authority's counters, a MessagePack map of name to unsigned integer.
    case stats(requestID: UInt64, counters: [String: UInt64])
    /// Bytes `offset..<offset + payload.count` of the state's encoding at `version`, which is
    /// `totalBytes` long: the answer to a `snapshot_chunk` request.
    case snapshotChunk(requestID: UInt64, version: UInt64, actionSeq: UInt64, app: String, totalBytes: UInt64, offset: UInt64, payload: [UInt8])
    /// A refusal; `ref` is the client_seq or request_id it answers (0 when unknown).
    case error(ref: UInt64, code: ErrorCode, message: String)
    /// What the authority does for the client beyond every release's replies
    /// (``AuthorityFeature/forClients``): the answer to a `features` request.
    case features(requestID: UInt64, features: [String])
    /// Several acks, in the order the actions were accepted (``AckBatch``): sent only to a
    /// connection that named ``ClientFeature/acks``.
    case acks([AckBatch.Entry])

    /// Decodes the frames a DEALER receives.
    package init(frames: [[UInt8]]) throws(ProtocolError) {
        guard let first = frames.first else { throw .malformed("empty message") }
        self = try WireHeader.read(first) { header throws(ProtocolError) -> Self in
            switch header.kind {
            case "ack":
                try header.expect(fields: 3)
                return .ack(clientSeq: try header.uint(0, "client_seq"), actionSeq: try header.uint(1, "action_seq"), version: try header.uint(2, "version"))
            case "snapshot":
                guard frames.count == 2 else { throw .malformed("snapshot needs a header and a payload frame") }
                try header.expect(fields: 4)
                return .snapshot(requestID: try header.uint(0, "request_id"), version: try header.uint(1, "version"),
                                 actionSeq: try header.uint(2, "action_seq"), app: try header.string(3, "app"), payload: frames[1])
            case "pong":
                // Two fields from authorities before `start_id`; later fields are extensions to ignore.
                try header.expect(atLeast: 2)
                let startID = header.fieldCount >= 3 ? try header.uint(2, "start_id") : 0
                let app = header.fieldCount >= 4 ? try header.string(3, "app") : ""
                let schema = header.fieldCount >= 5 ? try header.uint32(4, "schema") : 1
                let compatible = header.fieldCount >= 6 ? try header.uint32s(5, "compatible") : []
                let term = header.fieldCount >= 7 ? try header.optionalUInt(6, "term") : nil
                return .pong(requestID: try header.uint(0, "request_id"), version: try header.uint(1, "version"), startID: startID, app: app,
                             schema: schema, compatible: compatible, term: term)
            case "stats":
                try header.expect(fields: 2)
                guard case .map(let entries) = try header.value(1, "counters") else { throw .malformed("stats.counters must be a map") }
                var counters: [String: UInt64] = [:]
                for (key, value) in entries {
                    guard case .string(let name) = key, case .uint(let count) = value else { throw .malformed("stats.counters must map strings to unsigned integers") }
                    counters[name] = count
                }
                return .stats(requestID: try header.uint(0, "request_id"), counters: counters)
            case "snapshot_chunk":
                guard frames.count == 2 else { throw .malformed("snapshot_chunk needs a header and a payload frame") }
                try header.expect(fields: 6)
                return .snapshotChunk(requestID: try header.uint(0, "request_id"), version: try header.uint(1, "version"),
                                      actionSeq: try header.uint(2, "action_seq"), app: try header.string(3, "app"),
                                      totalBytes: try header.uint(4, "total_bytes"), offset: try header.uint(5, "offset"), payload: frames[1])
            case "error":
                return try Self.decodeError(header)
            case "features":
                try header.expect(fields: 2)
                return .features(requestID: try header.uint(0, "request_id"), features: try header.strings(1, "features"))
            case "acks":
                guard frames.count == 2 else { throw .malformed("acks needs a header and a body frame") }
                return .acks(try AckBatch.read(frames[1], count: try header.batchCount()))
            default:
                throw ProtocolError(.unknownKind, "unknown kind '\(header.kind)' from the authority")
            }
        }
    }

    static func decodeError(_ header: WireHeader) throws(ProtocolError) -> AuthorityReply {
        try header.expect(fields: 3)
        let raw = try header.string(1, "code")
        guard let code = ErrorCode(rawValue: raw) else { throw .malformed("unknown error code '\(raw)'") }
        return .error(ref: try header.uint(0, "ref"), code: code, message: try header.string(2, "message", maxBytes: 4_096))
    }

    /// The frames to send (without a routing id).
    package func frames(_ writer: HeaderWriter) -> [[UInt8]] {
        frames(writer, after: [])
    }

    /// The frames to send after `envelope` (a routing id, and the empty delimiter a REQ peer
    /// sends), in one array: a reply to each action is built as no more than its own frames.
    package func frames(_ writer: HeaderWriter, after envelope: ArraySlice<[UInt8]>) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        frames.reserveCapacity(envelope.count + 2)
        frames.append(contentsOf: envelope)
        frames.append([UInt8](packedHeader(writer)))
        switch self {
        case .snapshot(_, _, _, _, let payload), .snapshotChunk(_, _, _, _, _, _, let payload): frames.append(payload)
        case .acks(let entries): frames.append(writer.body { AckBatch.pack(entries, into: $0) })
        case .ack, .pong, .stats, .error, .features: break
        }
        return frames
    }

    /// The header frame, packed into `writer`'s buffer: valid until it packs again. An ack sent
    /// at once is sent from there, with no array of its own.
    package func packedHeader(_ writer: HeaderWriter) -> UnsafeRawBufferPointer {
        switch self {
        case .ack(let clientSeq, let actionSeq, let version):
            writer.packHeader("ack", count: 3) { $0.packUInt(clientSeq); $0.packUInt(actionSeq); $0.packUInt(version) }
        case .snapshot(let id, let version, let actionSeq, let app, _):
            writer.packHeader("snapshot", count: 4) { $0.packUInt(id); $0.packUInt(version); $0.packUInt(actionSeq); $0.packString(app) }
        case .pong(let id, let version, let startID, let app, let schema, let compatible, let term):
            writer.packHeader("pong", count: 7) { w in
                w.packUInt(id); w.packUInt(version); w.packUInt(startID); w.packString(app); w.packUInt(UInt64(schema))
                w.packArrayHeader(compatible.count)
                for other in compatible { w.packUInt(UInt64(other)) }
                if let term { w.packUInt(term) } else { w.packNil() }
            }
        case .stats(let id, let counters):
            writer.packHeader("stats", count: 2) { writer in
                writer.packUInt(id)
                writer.packMapHeader(counters.count)
                for (name, count) in counters.sorted(by: { $0.key < $1.key }) {
                    writer.packString(name)
                    writer.packUInt(count)
                }
            }
        case .snapshotChunk(let id, let version, let actionSeq, let app, let total, let offset, _):
            writer.packHeader("snapshot_chunk", count: 6) { w in
                w.packUInt(id); w.packUInt(version); w.packUInt(actionSeq); w.packString(app); w.packUInt(total); w.packUInt(offset)
            }
        case .error(let ref, let code, let message):
            writer.packHeader("error", count: 3) { $0.packUInt(ref); $0.packString(code.rawValue); $0.packString(message) }
        case .features(let id, let features):
            writer.packHeader("features", count: 2) { $0.packUInt(id); $0.packStrings(features) }
        case .acks(let entries):
            writer.packHeader("acks", count: 1) { $0.packUInt(UInt64(entries.count)) }
        }
    }
}
