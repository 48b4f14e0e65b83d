/// Remembers which `(client_id, client_seq)` pairs the authority accepted, so that a resent
/// action is acknowledged again instead of applied again, and so that no resend is ever
/// mistaken for a new action.
///
/// Compact, in the way Kafka keeps producer state: per client the exact set of accepted
/// sequence numbers as ranges (one range for a well-behaved client), plus the acks and payload
/// fingerprints of its last few accepted actions. A few hundred bytes per client, so the
/// default bound is a million clients.
///
/// Every answer is certain or says that it is not: a resend of an accepted action is never
/// applied again (``Verdict/duplicate(_:)`` or ``Verdict/appliedEarlier``); a resend with
/// another payload is a ``Verdict/conflict(_:)``; a resend whose fate the ledger no longer knows
/// is ``Verdict/stale`` or, for a forgotten client, ``Verdict/unknownClient(highestSeq:)``.
///
/// Codable, because the authority's snapshots carry it: dedup must survive a restart like the
/// state does. Limits are not encoded: ``apply(_:)`` sets them after a restore.
package struct ClientLedger: Sendable, Equatable {
    /// What an accepted action was acked with.
    struct Ack: Codable, Sendable, Hashable {
        var actionSeq: UInt64
        var version: UInt64

        init(actionSeq: UInt64, version: UInt64) {
            self.actionSeq = actionSeq
            self.version = version
        }
    }

    /// What to do with an incoming `(client_id, client_seq)`.
    enum Verdict: Equatable, Sendable {
        /// Never accepted: accept it.
        case new
        /// Accepted before with this payload: answer with the same ack, apply nothing.
        case duplicate(Ack)
        /// Accepted before, so long ago that its ack is no longer kept: apply nothing, answer
        /// that it was applied (with the current version, which includes it).
        case appliedEarlier
        /// Accepted before with another payload: refuse, apply nothing.
        case conflict(Ack)
        /// Below what is remembered of this client: it may or may not have been applied.
        case stale
        /// The client was forgotten (too many other clients since it was last seen) and this
        /// number is not above the highest it had sent: it may or may not have been applied.
        case unknownClient(highestSeq: UInt64)
    }

    /// What is left of a forgotten client.
    struct Tombstone: Sendable, Equatable {
        /// The highest sequence number accepted from it (or below which it was unknown already).
        var highest: UInt64
        var stamp: UInt64
    }

    struct Client: Codable, Sendable, Equatable {
        var accepted = AcceptedSequences()
        var recent = RecentAcks()
        /// Numbers at or below this are no longer known (gaps trimmed, or a forgotten client's past).
        var forgottenThrough: UInt64 = 0
        var lastSeen: UInt64 = 0

        // Short keys: a ledger holds up to millions of these in every snapshot.
        enum CodingKeys: String, CodingKey {
            case accepted = "a", recent = "r", forgottenThrough = "f", lastSeen = "l"
        }
    }

    /// How much is remembered.
    private(set) var limits: ClientLedgerLimits
    /// Every remembered client by id. Its keys change only in ``record(client:seq:payload:ack:)``,
    /// ``apply(_:)``, ``forgetLeastRecent()`` and decoding, which keep ``lastFound`` true.
    var clients: [String: Client] = [:]
    /// Where the last client was found in ``clients``: a client pipelining its actions is
    /// found once, not by hashing its id twice per action. Not part of the ledger's value.
    private var lastFound = LastFound<String, Client>()
    /// Forgotten clients by the fingerprint of their id.
    var forgotten: [UInt64: Tombstone] = [:]
    /// Tombstones in the order they were made, oldest first, so that trimming is deterministic
    /// on replay; an entry whose stamp no longer matches was revived or re-made, and is skipped.
    var forgottenOrder = Deque<(key: UInt64, stamp: UInt64)>()
    /// Stamps tombstones.
    var tombstoneClock: UInt64 = 0
    /// A logical clock: +1 per recorded action; orders clients by when they were last seen.
    var clock: UInt64 = 0

    /// Creates an empty ledger.
    init(limits: ClientLedgerLimits = ClientLedgerLimits()) {
        self.limits = limits
    }

    /// The number of clients remembered.
    var clientCount: Int { clients.count }

    /// The number of forgotten clients whose tombstone is kept.
    var forgottenCount: Int { forgotten.count }

    /// Classifies an incoming action; `payload` is its MessagePack payload as received.
    /// (Mutating only to remember where the client was found.)
    mutating func verdict(client: String, seq: UInt64, payload: [UInt8]) -> Verdict {
        // The client read where it is stored: `clients[client]` would copy it (and retain its
        // tables), for every action.
        guard let index = find(client) else {
            if let tombstone = forgotten[PayloadFingerprint.of(client.utf8)], seq <= tombstone.highest {
                return .unknownClient(highestSeq: tombstone.highest)
            }
            return .new
        }
        return Self.verdict(of: clients.values[index], seq: seq, payload: payload)
    }

    /// Where `client` is in ``clients``, if it is there.
    private mutating func find(_ client: String) -> [String: Client].Index? {
        lastFound.index(of: client, in: clients)
    }

    private static func verdict(of known: borrowing Client, seq: UInt64, payload: [UInt8]) -> Verdict {
        if let entry = known.recent.entry(for: seq) {
            let ack = Ack(actionSeq: entry.actionSeq, version: entry.version)
            if entry.fingerprint != 0 && entry.fingerprint != PayloadFingerprint.of(payload) { return .conflict(ack) }
            return .duplicate(ack)
        }
        if known.accepted.contains(seq) { return .appliedEarlier }
        if seq <= known.forgottenThrough { return .stale }
        return .new
    }

    /// Records that `(client, seq)` with `payload` was accepted with `ack`.
    mutating func record(client: String, seq: UInt64, payload: [UInt8], ack: Ack) {
        clock += 1
        let (limits, now) = (self.limits, clock)
        let entry = RecentAcks.Entry(seq: seq, actionSeq: ack.actionSeq, version: ack.version, fingerprint: PayloadFingerprint.of(payload))
        // A known client (nearly every action): found where the verdict found it, updated in place.
        if let index = find(client) {
            Self.update(&clients.values[index], seq: seq, entry: entry, limits: limits, now: now)
            return
        }
        var fresh = Client()
        if let tombstone = forgotten.removeValue(forKey: PayloadFingerprint.of(client.utf8)) {
            // A forgotten client came back with a number above its past: what lies below
            // stays unknown, never "new".
            fresh.forgottenThrough = tombstone.highest
        }
        // Complete before it is stored: seen now, it is the last the trim below would forget.
        Self.update(&fresh, seq: seq, entry: entry, limits: limits, now: now)
        lastFound.forget()
        clients[client] = fresh
        if clients.count > limits.maxClients { forgetLeastRecent() }
    }

    /// Sets the limits (after a restore) and trims what is over them.
    mutating func apply(_ limits: ClientLedgerLimits) {
        self.limits = limits
        lastFound.forget()
        clients = clients.mapValues { client in
            var client = client
            client.recent.shrink(to: limits.rememberedAcks)
            while client.accepted.gapCount > limits.maxGapsPerClient {
                client.forgottenThrough = max(client.forgottenThrough, client.accepted.dropOldest())
            }
            return client
        }
        if clients.count > limits.maxClients { forgetLeastRecent() }
        trimForgotten()
    }

    private static func update(_ client: inout Client, seq: UInt64, entry: RecentAcks.Entry, limits: ClientLedgerLimits, now: UInt64) {
        client.lastSeen = now
        client.accepted.insert(seq)
        client.recent.append(entry, capacity: limits.rememberedAcks)
        if client.accepted.gapCount > limits.maxGapsPerClient {
            client.forgottenThrough = max(client.forgottenThrough, client.accepted.dropOldest())
        }
    }

    /// Forgets the least recently seen clients down to 99% of the bound, in one pass, so that a
    /// full ledger costs O(log n) per new client amortised instead of a scan each time.
    private mutating func forgetLeastRecent() {
        let target = limits.maxClients - limits.maxClients / 100
        let excess = clients.count - target
        guard excess > 0 else { return }
        lastFound.forget()
        let oldest = clients.sorted { $0.value.lastSeen < $1.value.lastSeen }.prefix(excess)
        for (id, client) in oldest {
            clients[id] = nil
            guard limits.maxForgottenClients > 0 else { continue }
            let key = PayloadFingerprint.of(id.utf8)
            bury(key, highest: max(client.accepted.highest, client.forgottenThrough))
        }
        trimForgotten()
    }

    mutating func bury(_ key: UInt64, highest: UInt64) {
        tombstoneClock += 1
        let previous = forgotten[key]?.highest ?? 0
        forgotten[key] = Tombstone(highest: max(highest, previous), stamp: tombstoneClock)
        forgottenOrder.append((key, tombstoneClock))
    }

    /// Live tombstones, oldest first.
    var tombstones: [(key: UInt64, highest: UInt64)] {
        forgottenOrder.elements.compactMap { entry in
            guard let tombstone = forgotten[entry.key], tombstone.stamp == entry.stamp else { return nil }
            return (entry.key, tombstone.highest)
        }
    }

    /// Equal when they answer every verdict alike and forget alike from here on.
    package static func == (lhs: ClientLedger, rhs: ClientLedger) -> Bool {
        lhs.limits == rhs.limits && lhs.clock == rhs.clock && lhs.clients == rhs.clients
            && lhs.tombstones.elementsEqual(rhs.tombstones) { $0.key == $1.key && $0.highest == $1.highest }
    }

    private mutating func trimForgotten() {
        while forgotten.count > limits.maxForgottenClients, let oldest = forgottenOrder.popFirst() {
            if forgotten[oldest.key]?.stamp == oldest.stamp { forgotten[oldest.key] = nil }
        }
    }
}
