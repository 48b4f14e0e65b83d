import MessagePack
import ReactorCore
import ReactorLog
import ReactorStorage
import ReactorWire
import ZeroMQ

/// A primary's side of replication, on the authority's loop thread: the ROUTER its standbys
/// connect to, and the streaming of journal records to each (from memory, the journal files, or
/// the newest snapshot first), bounded per standby by a window of records not yet reported
/// durable. ``ReplicaSet`` makes the decisions; this type moves the bytes.
final class ReplicationServer<R: Reactor> {
    let socket: ZMQSocket
    let endpoint: String
    let mode: ReplicationConfiguration.Mode
    private let app: String
    private let schema: UInt32
    private let term: UInt64
    private let logger: Logger
    private var standbySet: ReplicaSet
    private let heartbeatMilliseconds: UInt64
    private var nextHeartbeat: UInt64 = 0
    /// Whether sync mode had a standby at the last check (for one log line per change).
    private var syncHadStandby: Bool?
    /// Records and bytes streamed since the last ``takeReport()``.
    private(set) var recordsSent: UInt64 = 0
    private(set) var bytesSent: UInt64 = 0
    /// Packs each `records` message's body (reused: its buffer stays allocated).
    private let recordsWriter = MessagePackWriter()

    init(configuration: ReplicationConfiguration, endpoint: String, app: String, schema: UInt32, heartbeatMilliseconds: UInt64,
         context: ZMQContext, security: AuthoritySecurity?, logger: Logger) throws {
        self.mode = configuration.mode
        self.app = app
        self.schema = schema
        self.term = configuration.term
        self.logger = logger
        self.heartbeatMilliseconds = heartbeatMilliseconds
        standbySet = ReplicaSet(timeoutMilliseconds: heartbeatMilliseconds * 3)
        socket = try ZMQSocket(context: context, type: .router)
        if let security { try security.apply(to: socket, domain: "replication") }
        try socket.set(.sendHighWaterMark, 0)
        try socket.set(.receiveHighWaterMark, 100_000)
        try socket.set(.linger, 0)
        try socket.bind(endpoint)
        self.endpoint = try socket.get(.lastEndpoint)
    }

    /// Standbys following now.
    var standbys: Int { standbySet.count }

    /// The LSN through which sync mode may ack: the best standby's durable LSN (0 without one).
    var syncDurable: UInt64 { standbySet.bestDurable ?? 0 }

    /// Records the best standby lacks.
    func lag(lastLSN: UInt64) -> UInt64 { standbySet.lag(lastLSN: lastLSN) }

    /// Handles one message from a standby.
    func handle(_ frames: [[UInt8]], durability: AuthorityDurability<R>, now: UInt64) throws(ZMQError) {
        guard frames.count >= 2, let message = ReplicationMessage.decode(frames[1]) else {
            logger.warning("replication: dropped a message that is not a replication header (\(frames.count) frame(s))")
            return
        }
        let peer = frames[0]
        switch message.type {
        case .hello:
            // The primary's own record where the standby's journal ends, to compare: read from
            // its journal (one segment) only when the standby sent its own, at a standby's start
            // or after a gap, never per record.
            let ownCRC = message.crc != nil ? durability.recordCRC(at: message.after ?? 0) : nil
            if let refusal = standbySet.hello(peer, message, app: app, schema: schema, lastLSN: durability.lastLSN, ownCRC: ownCRC, now: now) {
                let text = Self.describe(refusal, app: app, schema: schema)
                logger.warning("replication: refused a standby: \(text)")
                _ = try socket.trySend([peer, ReplicationMessage(.refused, term: term, code: refusal.code, message: text).encoded()])
                return
            }
            logger.info("replication: standby \(PeerID(peer)) follows from LSN \(message.after ?? 0) (primary at \(durability.lastLSN))")
            // `packed` only to a standby that asked for it: one of an older release reads a frame per record.
            _ = try socket.trySend([peer, ReplicationMessage(.welcome, term: term, app: app, schema: schema, lsn: durability.lastLSN,
                                                             packed: message.packed == true ? true : nil).encoded()])
        case .durable:
            if !standbySet.durable(peer, lsn: message.lsn ?? 0, now: now) {
                // A standby the primary forgot (a restart, a timeout): it must say hello again.
                _ = try socket.trySend([peer, ReplicationMessage(.heartbeat, term: term, lsn: durability.lastLSN, code: "hello").encoded()])
            }
        case .chunk:
            standbySet.heard(peer, now: now)
            guard let snapshot = standbySet.replicas[peer]?.snapshot, message.lsn == snapshot.lsn else { return }
            let offset = Int(clamping: message.offset ?? 0)
            let end = min(snapshot.bytes.count, offset + ReplicationMessage.chunkBytes)
            let bytes = offset < end ? Array(snapshot.bytes[offset..<end]) : []
            if try socket.trySend([peer, ReplicationMessage(.snapshotChunk, term: term, lsn: snapshot.lsn, size: UInt64(snapshot.bytes.count), offset: UInt64(offset)).encoded(), bytes]) {
                bytesSent += UInt64(bytes.count)
            }
            if end >= snapshot.bytes.count {
                // The records after the snapshot follow its last chunk; the standby reports the
                // snapshot's LSN durable once it installed it (until then its credit is spent).
                standbySet.update(peer) { $0.snapshot = nil; $0.sent = snapshot.lsn }
            }
        default:
            logger.debug("replication: ignored a \(message.type.rawValue) message from a standby")
        }
    }

    /// Sends each standby what its window allows; heartbeats and expiry when due.
    func pump(durability: AuthorityDurability<R>, now: UInt64) throws(ZMQError) {
        if now >= nextHeartbeat {
            nextHeartbeat = now + heartbeatMilliseconds
            for peer in standbySet.expire(now: now) { logger.warning("replication: standby \(PeerID(peer)) went silent; dropped (it may come back)") }
            for peer in standbySet.replicas.keys {
                _ = try socket.trySend([peer, ReplicationMessage(.heartbeat, term: term, lsn: durability.lastLSN).encoded()])
            }
        }
        for peer in Array(standbySet.replicas.keys) { try stream(to: peer, durability: durability) }
        if mode == .sync {
            let has = standbySet.count > 0
            if has != syncHadStandby {
                if has {
                    logger.info("sync replication: \(standbySet.count) standby(s) following; acks leave once one has the record")
                } else {
                    logger.warning("sync replication: no standby is following; acks are held until one is")
                }
                syncHadStandby = has
            }
        }
    }

    private func stream(to peer: [UInt8], durability: AuthorityDurability<R>) throws(ZMQError) {
        while true {
            guard let replica = standbySet.replicas[peer], replica.snapshot == nil else { return }
            let credit = min(standbySet.credit(peer), ReplicationMessage.maxRecordsPerMessage)
            guard credit > 0 else { return }
            let source = ReplicaSet.source(sent: replica.sent, recentFirst: durability.recent?.firstLSN,
                                           firstLSN: durability.firstLSN, lastLSN: durability.lastLSN)
            var payloads: [[UInt8]] = []
            switch source {
            case .upToDate:
                return
            case .diverged:
                standbySet.update(peer) { $0.sent = $0.durable }
                return
            case .recent:
                payloads = durability.recent?.payloads(from: replica.sent + 1, limit: credit) ?? []
            case .journal:
                payloads = readJournal(for: peer, after: replica.sent, limit: credit, durability: durability)
            case .snapshot:
                offerSnapshot(to: peer, durability: durability)
                return
            }
            guard !payloads.isEmpty else { return }
            let header = ReplicationMessage(.records, term: term, first: replica.sent + 1).encoded()
            let frames: [[UInt8]]
            if replica.packed {
                recordsWriter.reset()
                ReplicationRecords.pack(payloads, into: recordsWriter)
                frames = [peer, header, recordsWriter.bytes]
            } else {
                frames = [peer, header] + payloads
            }
            guard try socket.trySend(frames) else { return }
            recordsSent += UInt64(payloads.count)
            bytesSent += UInt64(payloads.reduce(0) { $0 + $1.count })
            standbySet.update(peer) { $0.sent += UInt64(payloads.count) }
        }
    }

    /// Up to `limit` records after `after` from the journal files, with a reader kept across turns.
    private func readJournal(for peer: [UInt8], after: UInt64, limit: Int, durability: AuthorityDurability<R>) -> [[UInt8]] {
        var reader: JournalReader
        do {
            if let kept = standbySet.replicas[peer]?.reader { reader = kept } else { reader = try durability.reader(after: after) }
            var payloads: [[UInt8]] = []
            var expected = after + 1
            while payloads.count < limit, let record = try reader.next() {
                if record.lsn < expected { continue }
                guard record.lsn == expected else { break }
                payloads.append(record.payload)
                expected += 1
            }
            let exhausted = payloads.count < limit
            standbySet.update(peer) { $0.reader = exhausted ? nil : reader }
            return payloads
        } catch {
            logger.warning("replication: reading the journal after LSN \(after) for standby \(PeerID(peer)) failed (\(error)); retrying")
            standbySet.update(peer) { $0.reader = nil }
            return []
        }
    }

    private func offerSnapshot(to peer: [UInt8], durability: AuthorityDurability<R>) {
        do {
            guard let snapshot = try durability.newestSnapshot() else {
                logger.error("replication: standby \(PeerID(peer)) needs records the journal no longer has, and there is no snapshot")
                return
            }
            standbySet.update(peer) { $0.snapshot = snapshot; $0.reader = nil }
            logger.info("replication: standby \(PeerID(peer)) is behind the journal; sending the snapshot at LSN \(snapshot.lsn) (\(snapshot.bytes.count) bytes) first")
            _ = try socket.trySend([peer, ReplicationMessage(.snapshot, term: term, lsn: snapshot.lsn, size: UInt64(snapshot.bytes.count)).encoded()])
        } catch {
            logger.error("replication: loading the newest snapshot for standby \(PeerID(peer)) failed: \(error)")
        }
    }

    /// Counts what was streamed since the last call.
    func takeReport() -> (records: UInt64, bytes: UInt64) {
        defer { recordsSent = 0; bytesSent = 0 }
        return (recordsSent, bytesSent)
    }

    func close() { socket.close() }

    static func describe(_ refusal: ReplicaSet.Refusal, app: String, schema: UInt32) -> String {
        switch refusal {
        case .version(let version):
            "replication protocol version \(version) is not supported (this primary speaks \(ReplicationMessage.protocolVersion))"
        case .app(let other):
            "the standby runs app '\(other)', this primary runs '\(app)': start the standby with --app \(app)"
        case .schema(let other):
            "the standby's app schema version is \(other), this primary's is \(schema): run the same build on both"
        case .diverged(let standby, let primary):
            "the standby's journal ends at LSN \(standby), after this primary's (\(primary)): it holds records this primary never had; start it on an empty --data directory"
        case .differs(let lsn):
            "the standby's record at LSN \(lsn), where its journal ends, is not this primary's: it holds records this primary never had (an old primary's tail that was never replicated?); start it on an empty --data directory"
        }
    }
}
