/// Remembers which `(client_id, client_seq)` pairs were accepted, so that a resent action is acked
/// again instead of applied again.
///
/// Bounded: per client the last `window` sequence numbers, and at most `maxClients` clients (the
/// least recently seen is forgotten first). Codable, because the authority's snapshots carry it:
/// dedup must survive a restart like the state does.
public struct ClientLedger: Codable, Sendable, Equatable {
    /// What an accepted action was acked with.
    public struct Ack: Codable, Sendable, Hashable {
        public var actionSeq: UInt64
        public var version: UInt64

        public init(actionSeq: UInt64, version: UInt64) {
            self.actionSeq = actionSeq
            self.version = version
        }
    }

    /// What to do with an incoming `(client_id, client_seq)`.
    public enum Verdict: Equatable, Sendable {
        /// Never seen: accept it.
        case new
        /// Already accepted: answer with the same ack, apply nothing.
        case duplicate(Ack)
        /// Older than what is remembered: it may or may not have been applied.
        case stale
    }

    struct Client: Codable, Sendable, Equatable {
        var highest: UInt64 = 0
        var acks: [UInt64: Ack] = [:]
        var lastSeen: UInt64 = 0
    }

    /// Sequence numbers remembered per client.
    public let window: UInt64
    /// Clients remembered.
    public let maxClients: Int
    private var clients: [String: Client] = [:]
    private var clock: UInt64 = 0

    /// Creates an empty ledger.
    public init(window: UInt64 = 4_096, maxClients: Int = 4_096) {
        self.window = max(1, window)
        self.maxClients = max(1, maxClients)
    }

    /// The number of clients remembered.
    public var clientCount: Int { clients.count }

    /// Classifies an incoming action.
    public func verdict(client: String, seq: UInt64) -> Verdict {
        guard let known = clients[client] else { return .new }
        if known.highest >= window, seq <= known.highest - window { return .stale }
        if let ack = known.acks[seq] { return .duplicate(ack) }
        return .new
    }

    /// Records that `(client, seq)` was accepted with `ack`.
    public mutating func record(client: String, seq: UInt64, ack: Ack) {
        clock += 1
        if clients[client] == nil, clients.count >= maxClients { forgetLeastRecent() }
        // Mutate in place: copying a client out of the dictionary would copy its acks.
        let window = self.window
        let now = clock
        Self.update(&clients[client, default: Client()], seq: seq, ack: ack, window: window, now: now)
    }

    private static func update(_ entry: inout Client, seq: UInt64, ack: Ack, window: UInt64, now: UInt64) {
        entry.acks[seq] = ack
        entry.lastSeen = now
        guard seq > entry.highest else { return }
        entry.highest = seq
        // Prune in bulk once twice the window is held, so each record costs O(1) amortised.
        if entry.acks.count > 2 * Int(window), entry.highest > window {
            let floor = entry.highest - window
            entry.acks = entry.acks.filter { $0.key > floor }
        }
    }

    private mutating func forgetLeastRecent() {
        guard let oldest = clients.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key else { return }
        clients[oldest] = nil
    }
}
