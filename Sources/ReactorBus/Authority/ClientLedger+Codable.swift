/// The ledger's snapshot encoding, and the reading of the earlier one.
///
/// Format 2 (this one): `format`, `clock`, `clients` (id -> accepted ranges, recent acks,
/// forgotten-through, last seen) and `forgotten` (tombstones, oldest first). The earlier format
/// (no `format` key) kept every ack of the last 4,096 numbers per client; it is read by turning
/// those acks into ranges, so a snapshot written by an older authority still restores its
/// dedup state instead of failing or silently dropping it.
extension ClientLedger: Codable {
    private enum Keys: String, CodingKey {
        case format, clock, clients, forgotten
        // The earlier format's keys.
        case window
    }

    private struct StoredTombstone: Codable {
        var key: UInt64
        var highest: UInt64
    }

    /// The earlier format's per-client entry.
    private struct LegacyClient: Decodable {
        var highest: UInt64
        var acks: [UInt64: Ack]
        var lastSeen: UInt64
    }

    static let format: UInt64 = 2

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(Self.format, forKey: .format)
        try container.encode(clock, forKey: .clock)
        try container.encode(clients, forKey: .clients)
        try container.encode(tombstones.map { StoredTombstone(key: $0.key, highest: $0.highest) }, forKey: .forgotten)
    }

    package init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: Keys.self)
        clock = try container.decode(UInt64.self, forKey: .clock)
        guard let format = try container.decodeIfPresent(UInt64.self, forKey: .format) else {
            let window = try container.decode(UInt64.self, forKey: .window)
            let legacy = try container.decode([String: LegacyClient].self, forKey: .clients)
            clients = legacy.mapValues { Self.convert($0, window: window) }
            return
        }
        guard format == Self.format else {
            throw DecodingError.dataCorruptedError(
                forKey: .format, in: container,
                debugDescription: "client ledger format \(format) is newer than this authority understands (\(Self.format)): upgrade the authority")
        }
        clients = try container.decode([String: Client].self, forKey: .clients)
        for tombstone in try container.decode([StoredTombstone].self, forKey: .forgotten) {
            bury(tombstone.key, highest: tombstone.highest)
        }
    }

    /// An earlier-format client: its kept acks become exact ranges; what lay below its window
    /// was answered `stale` then and stays unknown now.
    private static func convert(_ legacy: LegacyClient, window: UInt64) -> Client {
        var client = Client()
        client.lastSeen = legacy.lastSeen
        client.forgottenThrough = legacy.highest > window ? legacy.highest - window : 0
        let kept = legacy.acks.keys.filter { $0 > client.forgottenThrough }.sorted()
        for seq in kept { client.accepted.insert(seq) }
        for seq in kept.suffix(ClientLedgerLimits().rememberedAcks) {
            guard let ack = legacy.acks[seq] else { continue }
            client.recent.append(.init(seq: seq, actionSeq: ack.actionSeq, version: ack.version, fingerprint: 0), capacity: .max)
        }
        return client
    }
}
