/// The acks of one client's most recently accepted actions, kept so that a resend is answered
/// with its original `action_seq` and `version`, and so that a resend with another payload is
/// recognised as a conflict.
///
/// A ring of at most `capacity` entries (the authority's `--remembered-acks`): a resend comes
/// within one client window of the original, so a few dozen suffice, and the ledger stays
/// kilobytes for thousands of clients.
struct RecentAcks: Codable, Sendable, Equatable {
    struct Entry: Codable, Sendable, Equatable {
        var seq: UInt64
        var actionSeq: UInt64
        var version: UInt64
        /// ``PayloadFingerprint`` of the action's payload; 0 when unknown (a legacy snapshot).
        var fingerprint: UInt64

        init(seq: UInt64, actionSeq: UInt64, version: UInt64, fingerprint: UInt64) {
            self.seq = seq
            self.actionSeq = actionSeq
            self.version = version
            self.fingerprint = fingerprint
        }

        // A flat array of four numbers: no key names repeated for every entry in snapshots.
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            seq = try container.decode(UInt64.self)
            actionSeq = try container.decode(UInt64.self)
            version = try container.decode(UInt64.self)
            fingerprint = try container.decode(UInt64.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(seq)
            try container.encode(actionSeq)
            try container.encode(version)
            try container.encode(fingerprint)
        }
    }

    private(set) var entries: [Entry] = []
    /// Where the next entry goes once the ring is full.
    private var next = 0
    /// The highest `seq` held (0 when none): a client numbers its actions upwards, so an
    /// action's number is above all of them and the search ends here, for nearly every action.
    private var highest: UInt64 = 0

    private enum CodingKeys: String, CodingKey {
        case entries, next
    }

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        entries = try container.decode([Entry].self, forKey: .entries)
        next = try container.decode(Int.self, forKey: .next)
        highest = Self.highest(of: entries)
    }

    /// The entry for `seq`, if still kept.
    func entry(for seq: UInt64) -> Entry? {
        guard seq <= highest else { return nil }
        // Newest first (a resend is usually of something recent): down from the slot before
        // `next`, then down from the end. Asked for every action: no division per step.
        let split = min(next, entries.count)
        for index in stride(from: split - 1, through: 0, by: -1) where entries[index].seq == seq { return entries[index] }
        for index in stride(from: entries.count - 1, through: split, by: -1) where entries[index].seq == seq { return entries[index] }
        return nil
    }

    mutating func append(_ entry: Entry, capacity: Int) {
        let capacity = max(1, capacity)
        if entries.count < capacity {
            if next != entries.count { inOrder() }
            entries.append(entry)
            next = entries.count % capacity
            highest = max(highest, entry.seq)
            return
        }
        if entries.count > capacity { shrink(to: capacity) }
        let replaced = entries[next].seq
        entries[next] = entry
        next = (next + 1) % entries.count
        highest = replaced == highest ? Self.highest(of: entries) : max(highest, entry.seq)
    }

    private static func highest(of entries: [Entry]) -> UInt64 {
        entries.reduce(0) { max($0, $1.seq) }
    }

    /// Keeps the `capacity` newest entries (after the limit was lowered between runs).
    mutating func shrink(to capacity: Int) {
        guard entries.count > capacity else { return }
        inOrder()
        entries = Array(entries.suffix(capacity))
        next = 0
        highest = Self.highest(of: entries)
    }

    /// Rotates the ring so that the oldest entry is first and the next one goes at the end.
    private mutating func inOrder() {
        entries = Array(entries[next...] + entries[..<next])
        next = entries.count
    }
}
