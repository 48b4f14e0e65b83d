import CMsgPack
import MessagePack
import ReactorBus
import ZeroMQ

/// The limit baseline of the sync pipeline: the counter app's authority written directly on
/// libzmq (through the project's `ZMQSocket`, as the nodes use it) and msgpack-c calls, with no
/// reactor, no `Sequencer`, no `Codable` and no journal: what the same client → authority →
/// feed → observer pipeline costs when only the libraries work, so a report shows the
/// framework's overhead apart from theirs.
///
/// It does what `examples/python/baseline_authority.py` does, with the same batching (read what
/// is waiting, up to 2,048 messages, then publish one snapshot): `action` (`countUp` applied and
/// acked with `action_seq` and version; a resent `(client_id, client_seq)` acked again, not
/// applied), `snapshot`, `ping`, `stats`; anything else gets an `error`. Headers are read with
/// `msgpack_unpack_next` into msgpack-c's objects and packed with `msgpack_pack_*` calls into a
/// reused buffer; the action payload is unpacked and checked to be `{"countUp":{}}`.
///
/// Run as `reactor-bench peer pipeline-authority --actions EP --feed EP`; prints the bound
/// endpoints as one JSON line, like `reactor-node authority`, and serves until SIGTERM.
final class PipelineBaselineAuthority {
    private static let version: UInt64 = 1
    /// Client sequence numbers remembered per client (as the protocol says an authority must).
    private static let remembered = 4_096
    /// Messages read before one snapshot is published.
    private static let batch = 2_048

    private let actions: ZMQSocket
    private let feed: ZMQSocket
    private let writer = MessagePackWriter()
    private var unpacked = msgpack_unpacked()
    private var count: UInt64 = 0
    private var actionSeq: UInt64 = 0
    private var clients: [String: [UInt64: (actionSeq: UInt64, version: UInt64)]] = [:]
    private var counters = Counters()
    private var publishedVersion: UInt64?
    private var lastPublished: UInt64 = 0

    private init(context: ZMQContext, actions actionsEndpoint: String, feed feedEndpoint: String) throws {
        actions = try ZMQSocket(context: context, type: .router)
        try actions.set(.linger, 0)
        try actions.set(.receiveHighWaterMark, 100_000)
        try actions.set(.sendHighWaterMark, 100_000)
        try actions.set(.receiveTimeout, 250)
        try actions.bind(actionsEndpoint)
        feed = try ZMQSocket(context: context, type: .pub)
        try feed.set(.linger, 0)
        try feed.set(.sendHighWaterMark, 10_000)
        try feed.bind(feedEndpoint)
        msgpack_unpacked_init(&unpacked)
    }

    deinit { msgpack_unpacked_destroy(&unpacked) }

    /// Binds, prints the endpoints and serves until the process is signalled.
    static func serve(actions: String, feed: String) -> Int32 {
        RawZMQBaseline.run("pipeline-authority") { context in
            let authority = try PipelineBaselineAuthority(context: context, actions: actions, feed: feed)
            let line = MessagePackValue.object([("actions", .string(try authority.actions.get(.lastEndpoint))),
                                                ("feed", .string(try authority.feed.get(.lastEndpoint)))])
            Output.line(line.rendered)
            while true { try authority.turn() }
        }
    }

    /// Reads up to a batch of messages (waiting up to 250 ms for the first), then publishes.
    private func turn() throws {
        var read = 0
        while read < Self.batch {
            var identity: [UInt8] = []
            var header: (kind: Kind, fields: [UInt64], client: String)?
            var payload: UnsafeRawBufferPointer?
            var envelopeOK = true
            let got = try actions.receiveFrames(wait: read == 0) { frame, index, _ in
                switch index {
                case 0: identity = Array(frame)
                case 1: header = parseHeader(frame)
                case 2: if header?.kind == .action { payload = frame; handleAction(identity, header, frame) }
                default: envelopeOK = false
                }
            }
            guard got else { break }
            read += 1
            guard envelopeOK else { continue }
            if payload == nil { handleRequest(identity, header) }
        }
        try publish()
    }

    // MARK: Messages

    /// What `stats` reports, as the Python baseline names it.
    private struct Counters {
        var actionsAccepted: UInt64 = 0
        var actionsDuplicate: UInt64 = 0
        var badActions: UInt64 = 0
        var malformed: UInt64 = 0
        var snapshotsPublished: UInt64 = 0
        var snapshotRequests: UInt64 = 0

        var named: [(String, UInt64)] {
            [("actions_accepted", actionsAccepted), ("actions_duplicate", actionsDuplicate), ("bad_actions", badActions),
             ("malformed", malformed), ("snapshots_published", snapshotsPublished), ("snapshot_requests", snapshotRequests)]
        }
    }

    private enum Kind: Equatable { case action, snapshot, ping, stats, other(String), malformed }

    /// The kind and the unsigned fields after it (for `action`: the client id too).
    private func parseHeader(_ frame: UnsafeRawBufferPointer) -> (kind: Kind, fields: [UInt64], client: String) {
        guard let object = unpack(frame), object.type == MSGPACK_OBJECT_ARRAY, object.via.array.size >= 2,
              let items = object.via.array.ptr else { return (.malformed, [], "") }
        let count = Int(object.via.array.size)
        guard items[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER, items[0].via.u64 == Self.version,
              let kindText = string(items[1]) else { return (.malformed, [], "") }
        var fields: [UInt64] = []
        var client = ""
        for index in 2..<count {
            if items[index].type == MSGPACK_OBJECT_POSITIVE_INTEGER { fields.append(items[index].via.u64) }
            else if index == 2, let text = string(items[index]) { client = text }
        }
        let kind: Kind = switch kindText {
        case "action": count == 4 && !client.isEmpty && fields.count == 1 ? .action : .malformed
        case "snapshot": count == 3 && fields.count == 1 ? .snapshot : .malformed
        case "ping": count == 3 && fields.count == 1 ? .ping : .malformed
        case "stats": count == 3 && fields.count == 1 ? .stats : .malformed
        default: .other(kindText)
        }
        return (kind, fields, client)
    }

    private func handleAction(_ identity: [UInt8], _ header: (kind: Kind, fields: [UInt64], client: String)?, _ payload: UnsafeRawBufferPointer) {
        guard let header, header.kind == .action, let seq = header.fields.first else { return }
        if let known = clients[header.client]?[seq] {
            counters.actionsDuplicate += 1
            reply(identity) { $0.packArrayHeader(5); $0.packUInt(Self.version); $0.packString("ack"); $0.packUInt(seq); $0.packUInt(known.actionSeq); $0.packUInt(known.version) }
            return
        }
        guard isCountUp(payload) else {
            counters.badActions += 1
            error(identity, ref: seq, code: "bad_action", "this baseline authority only applies countUp")
            return
        }
        actionSeq += 1
        count += 1
        counters.actionsAccepted += 1
        var seen = clients.removeValue(forKey: header.client) ?? [:]
        seen[seq] = (actionSeq, count)
        if seen.count > 2 * Self.remembered {
            for old in seen.keys.sorted().dropLast(Self.remembered) { seen[old] = nil }
        }
        clients[header.client] = seen
        let (actionSeq, version) = (actionSeq, count)
        reply(identity) { $0.packArrayHeader(5); $0.packUInt(Self.version); $0.packString("ack"); $0.packUInt(seq); $0.packUInt(actionSeq); $0.packUInt(version) }
    }

    /// Everything but an action with its payload.
    private func handleRequest(_ identity: [UInt8], _ header: (kind: Kind, fields: [UInt64], client: String)?) {
        guard let header else { return }
        let id = header.fields.first ?? 0
        let (version, actionSeq) = (count, self.actionSeq)
        switch header.kind {
        case .snapshot:
            counters.snapshotRequests += 1
            writer.reset()
            writer.packArrayHeader(6); writer.packUInt(Self.version); writer.packString("snapshot"); writer.packUInt(id)
            writer.packUInt(version); writer.packUInt(actionSeq); writer.packString("counter")
            let head = writer.bytes
            _ = try? actions.send([identity, head, state()])
        case .ping:
            reply(identity) { $0.packArrayHeader(4); $0.packUInt(Self.version); $0.packString("pong"); $0.packUInt(id); $0.packUInt(version) }
        case .stats:
            let values = counters.named + [("version", version), ("action_seq", actionSeq)]
            reply(identity) { writer in
                writer.packArrayHeader(4); writer.packUInt(Self.version); writer.packString("stats"); writer.packUInt(id)
                writer.packMapHeader(values.count)
                for (name, value) in values { writer.packString(name); writer.packUInt(value) }
            }
        case .action, .malformed:
            counters.malformed += 1
            error(identity, ref: 0, code: "malformed", "the message has the wrong shape")
        case .other(let kind):
            error(identity, ref: id, code: "unknown_kind", "unknown kind '\(kind)' on the actions socket")
        }
    }

    /// After each batch that changed the state, one snapshot; a heartbeat once a second when idle.
    private func publish() throws {
        let now = MonotonicClock.milliseconds()
        if count != publishedVersion {
            writer.reset()
            writer.packArrayHeader(3); writer.packUInt(Self.version); writer.packUInt(count); writer.packUInt(actionSeq)
            try feed.send([Array("snapshot".utf8), writer.bytes, state()])
            counters.snapshotsPublished += 1
            publishedVersion = count
            lastPublished = now
        } else if now - lastPublished >= 1_000 {
            writer.reset()
            writer.packArrayHeader(3); writer.packUInt(Self.version); writer.packUInt(count); writer.packUInt(actionSeq)
            try feed.send([Array("heartbeat".utf8), writer.bytes])
            lastPublished = now
        }
    }

    // MARK: msgpack-c

    /// `{"count": N}`.
    private func state() -> [UInt8] {
        writer.reset()
        writer.packMapHeader(1); writer.packString("count"); writer.packUInt(count)
        return writer.bytes
    }

    private func reply(_ identity: [UInt8], _ pack: (MessagePackWriter) -> Void) {
        writer.reset()
        pack(writer)
        _ = try? actions.send([identity, writer.bytes])
    }

    private func error(_ identity: [UInt8], ref: UInt64, code: String, _ message: String) {
        reply(identity) { $0.packArrayHeader(5); $0.packUInt(Self.version); $0.packString("error"); $0.packUInt(ref); $0.packString(code); $0.packString(message) }
    }


    /// The one object in `frame`, unpacked by msgpack-c into the reused zone.
    private func unpack(_ frame: UnsafeRawBufferPointer) -> msgpack_object? {
        guard let base = frame.baseAddress?.assumingMemoryBound(to: CChar.self) else { return nil }
        var offset = 0
        guard msgpack_unpack_next(&unpacked, base, frame.count, &offset) == MSGPACK_UNPACK_SUCCESS, offset == frame.count else { return nil }
        return unpacked.data
    }

    private func string(_ object: msgpack_object) -> String? {
        guard object.type == MSGPACK_OBJECT_STR, let pointer = object.via.str.ptr else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(object.via.str.size)), as: UTF8.self)
    }

    /// Whether the payload is `{"countUp":{}}`.
    private func isCountUp(_ payload: UnsafeRawBufferPointer) -> Bool {
        guard let object = unpack(payload), object.type == MSGPACK_OBJECT_MAP, object.via.map.size == 1, let entry = object.via.map.ptr?.pointee,
              string(entry.key) == "countUp", entry.val.type == MSGPACK_OBJECT_MAP, entry.val.via.map.size == 0 else { return false }
        return true
    }
}
