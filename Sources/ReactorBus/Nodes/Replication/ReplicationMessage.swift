import MessagePack

/// One message of the replication protocol between a primary authority (ROUTER, `--replication`)
/// and its standbys (DEALER, `--standby`): a MessagePack header frame, then for `records` the
/// journal records' payloads (the bytes as journaled, never re-encoded): one frame holding them
/// all (``ReplicationRecords``) once both sides said `packed`, else one frame each; for
/// `snapshot_chunk` one frame of snapshot bytes. docs/PROTOCOL.md, "Replication".
struct ReplicationMessage: Codable, Equatable, Sendable {
    /// The replication protocol's version; a peer of another version is refused.
    static let protocolVersion: UInt32 = 1
    /// Records per `records` message at most.
    static let maxRecordsPerMessage = 512
    /// Bytes per `snapshot_chunk` at most.
    static let chunkBytes = 1 << 20

    enum Kind: String, Codable, Sendable {
        /// Standby → primary: who it is and after which LSN its journal ends (not: is committed).
        case hello
        /// Primary → standby: the hello was accepted; records (or a snapshot offer) follow.
        case welcome
        /// Primary → standby: the hello was refused (`code`, `message`); the standby stops.
        case refused
        /// Primary → standby: journal records from LSN `first`: in one frame (``ReplicationRecords``)
        /// when the `welcome` said `packed`, else one frame each.
        case records
        /// Primary → standby: the journal before `lsn` is gone; fetch the snapshot covering
        /// through `lsn` (`size` bytes) with `chunk` requests, then say `hello` again after it.
        case snapshot
        /// Standby → primary: asks for the snapshot's bytes at `offset`.
        case chunk
        /// Primary → standby: the snapshot's bytes at `offset` (one frame).
        case snapshotChunk = "snapshot_chunk"
        /// Standby → primary: its journal is committed through `lsn` (also its heartbeat).
        case durable
        /// Primary → standby: its journal ends at `lsn` (sent every heartbeat interval).
        case heartbeat
    }

    var v: UInt32 = Self.protocolVersion
    var type: Kind
    /// Term of the primary this standby follows (or the primary's own): 0 until elections stamp one.
    var term: UInt64?
    var app: String?
    var schema: UInt32?
    /// `hello`: the standby's journal ends here (0: empty), records not yet committed included:
    /// where the primary resumes streaming, never what it counts as durable.
    var after: UInt64?
    /// `records`: the first record's LSN.
    var first: UInt64?
    /// `durable`, `heartbeat`, `welcome`, `snapshot`, `chunk`, `snapshot_chunk`: an LSN.
    var lsn: UInt64?
    var size: UInt64?
    var offset: UInt64?
    var code: String?
    var message: String?
    /// `hello`: the standby reads a `records` message's payloads in one frame; `welcome`: the
    /// primary sends them so to this standby. Absent from (and ignored by) releases before it,
    /// which send and read a frame per record: a primary and standbys of either release follow
    /// each other, as a rolling upgrade needs.
    var packed: Bool?
    /// `hello`: the CRC-32C of the payload of the standby's record at `after`, so that the primary
    /// can tell a journal that holds other records at the same LSNs (an old primary's tail that was
    /// never replicated) from its own. Absent when the standby has no such record (an empty
    /// journal, one that starts after a snapshot) and from releases before it.
    var crc: UInt32?

    init(_ type: Kind, term: UInt64? = nil, app: String? = nil, schema: UInt32? = nil, after: UInt64? = nil, first: UInt64? = nil,
         lsn: UInt64? = nil, size: UInt64? = nil, offset: UInt64? = nil, code: String? = nil, message: String? = nil, packed: Bool? = nil,
         crc: UInt32? = nil) {
        self.type = type
        self.term = term
        self.app = app
        self.schema = schema
        self.after = after
        self.first = first
        self.lsn = lsn
        self.size = size
        self.offset = offset
        self.code = code
        self.message = message
        self.packed = packed
        self.crc = crc
    }

    /// The header frame.
    func encoded() -> [UInt8] {
        // A struct of integers, strings and a string enum always encodes.
        (try? MessagePackEncoder().encode(self)) ?? []
    }

    /// Decodes a header frame; `nil` for bytes that are not one (dropped and counted by the caller).
    static func decode(_ frame: [UInt8]) -> ReplicationMessage? {
        try? MessagePackDecoder().decode(ReplicationMessage.self, from: frame)
    }
}
