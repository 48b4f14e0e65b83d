import ReactorStorage

/// The primary's view of its standbys, and the streaming decisions, without sockets: whom to
/// admit, where each one's records come from, how many may be in flight, what sync mode may ack.
struct ReplicaSet {
    /// Where the records a standby needs next come from.
    enum Source: Equatable {
        /// Nothing to send: the standby has every record.
        case upToDate
        /// From memory (``RecentRecords``).
        case recent
        /// From the journal files (the standby is further behind than memory reaches).
        case journal
        /// The journal no longer has them (compacted): the newest snapshot first.
        case snapshot
        /// The standby has records this primary does not: it cannot follow.
        case diverged
    }

    /// Why a `hello` is refused.
    enum Refusal: Equatable {
        case version(UInt32)
        case app(String)
        case schema(UInt32)
        case diverged(standby: UInt64, primary: UInt64)
        /// The standby's record at `lsn`, where its journal ends, is not this primary's.
        case differs(at: UInt64)

        var code: String {
            switch self {
            case .version: "unsupported_version"
            case .app: "wrong_app"
            case .schema: "schema_mismatch"
            case .diverged, .differs: "diverged"
            }
        }
    }

    struct Replica {
        /// The standby's journal is committed through this LSN (its last `durable`): what sync
        /// mode may ack through. Never a `hello`'s `after`, which may name records not yet on
        /// the standby's disk.
        var durable: UInt64
        /// Records through this LSN were sent.
        var sent: UInt64
        /// The `hello`'s `after`: the standby has the records through it (committed or not), so
        /// they are not in flight for the window.
        var resumed: UInt64
        /// When it was last heard from (monotonic milliseconds).
        var lastHeard: UInt64
        /// While it fetches a snapshot: the snapshot's LSN and bytes.
        var snapshot: (lsn: UInt64, bytes: [UInt8])?
        /// While it catches up from the journal files: the reader, positioned after ``sent``.
        var reader: JournalReader?
        /// It said `packed` in its `hello`: its `records` carry their payloads in one frame.
        var packed = false

        init(durable: UInt64, sent: UInt64, resumed: UInt64 = 0, lastHeard: UInt64, packed: Bool = false) {
            self.durable = durable
            self.sent = sent
            self.resumed = resumed
            self.lastHeard = lastHeard
            self.packed = packed
        }
    }

    /// Records sent and not yet reported durable, per standby, at most.
    let window: UInt64
    /// A standby silent this long is dropped.
    let timeoutMilliseconds: UInt64
    private(set) var replicas: [[UInt8]: Replica] = [:]

    init(window: UInt64 = 8_192, timeoutMilliseconds: UInt64) {
        self.window = window
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    var count: Int { replicas.count }

    /// The highest LSN some standby has durable (what sync mode may ack through); `nil` without one.
    var bestDurable: UInt64? { replicas.values.map(\.durable).max() }

    /// The durable LSN of the last standby heard from, kept after it went silent.
    private(set) var lastKnownDurable: UInt64?

    /// Records of the primary's `lastLSN` that the best standby lacks: what a failover to it
    /// would lose. Without a standby following, measured against the last one that did (0 if
    /// none ever did).
    func lag(lastLSN: UInt64) -> UInt64 {
        guard let best = bestDurable ?? lastKnownDurable else { return 0 }
        return lastLSN > best ? lastLSN - best : 0
    }

    /// Checks a `hello` against this primary; on success the standby is (re)admitted, streaming
    /// from after `after`. `after` is only where streaming resumes: the standby's journal may end
    /// there with records not yet committed, so it counts as durable no further than its
    /// `durable` reports said (kept across a re-hello of the same standby, up to `after`).
    ///
    /// A standby's journal that holds other records than this primary's at the same LSNs (an old
    /// primary's tail that was never replicated, rejoining a primary that has journaled as many
    /// since) is refused: when it is longer, by its length; else by `ownCRC`, the CRC-32C of this
    /// primary's record at `after`, against the hello's `crc` of the standby's. Without either
    /// (the primary no longer has that record, or a standby of an earlier release) it is admitted
    /// as before.
    mutating func hello(_ peer: [UInt8], _ message: ReplicationMessage, app: String, schema: UInt32, lastLSN: UInt64,
                        ownCRC: UInt32? = nil, now: UInt64) -> Refusal? {
        guard message.v == ReplicationMessage.protocolVersion else { return .version(message.v) }
        guard message.app == app else { return .app(message.app ?? "") }
        guard message.schema == schema else { return .schema(message.schema ?? 0) }
        let after = message.after ?? 0
        guard after <= lastLSN else {
            replicas[peer] = nil
            return .diverged(standby: after, primary: lastLSN)
        }
        if let theirs = message.crc, let ownCRC, theirs != ownCRC {
            replicas[peer] = nil
            return .differs(at: after)
        }
        let reported = min(replicas[peer]?.durable ?? 0, after)
        replicas[peer] = Replica(durable: reported, sent: after, resumed: after, lastHeard: now, packed: message.packed == true)
        return nil
    }

    /// Where `peer`'s next records come from: `recentFirst` is the oldest LSN in memory, and the
    /// journal holds `firstLSN...lastLSN`.
    static func source(sent: UInt64, recentFirst: UInt64?, firstLSN: UInt64, lastLSN: UInt64) -> Source {
        if sent > lastLSN { return .diverged }
        if sent == lastLSN { return .upToDate }
        if let recentFirst, sent + 1 >= recentFirst { return .recent }
        if sent + 1 >= firstLSN { return .journal }
        return .snapshot
    }

    /// How many records may be sent to `peer` now (its window minus those in flight).
    func credit(_ peer: [UInt8]) -> Int {
        guard let replica = replicas[peer], replica.snapshot == nil else { return 0 }
        let received = max(replica.durable, replica.resumed)
        let inFlight = replica.sent > received ? replica.sent - received : 0
        return inFlight >= window ? 0 : Int(window - inFlight)
    }

    /// `peer` reported its journal durable through `lsn`. Returns whether it is known.
    @discardableResult
    mutating func durable(_ peer: [UInt8], lsn: UInt64, now: UInt64) -> Bool {
        guard var replica = replicas[peer] else { return false }
        replica.durable = max(replica.durable, lsn)
        replica.sent = max(replica.sent, replica.durable)
        replica.lastHeard = now
        replicas[peer] = replica
        lastKnownDurable = max(lastKnownDurable ?? 0, replica.durable)
        return true
    }

    /// Marks `peer` heard from `now`.
    mutating func heard(_ peer: [UInt8], now: UInt64) {
        replicas[peer]?.lastHeard = now
    }

    mutating func update(_ peer: [UInt8], _ body: (inout Replica) -> Void) {
        guard var replica = replicas[peer] else { return }
        body(&replica)
        replicas[peer] = replica
    }

    /// Drops the standbys silent for longer than the timeout; returns them.
    mutating func expire(now: UInt64) -> [[UInt8]] {
        let silent = replicas.filter { now > $0.value.lastHeard + timeoutMilliseconds }.map(\.key)
        for peer in silent { replicas[peer] = nil }
        return silent
    }
}
