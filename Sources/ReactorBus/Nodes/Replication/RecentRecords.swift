/// The newest journal records as appended (LSN and payload bytes), kept in memory so a primary
/// streams what it just wrote to its standbys without reading the journal back. Bounded by
/// records and bytes; a standby further behind is served from the journal files.
struct RecentRecords {
    private var records = Deque<(lsn: UInt64, payload: [UInt8])>()
    private var bytes = 0
    let maxRecords: Int
    let maxBytes: Int

    init(maxRecords: Int = 65_536, maxBytes: Int = 64 << 20) {
        self.maxRecords = maxRecords
        self.maxBytes = maxBytes
    }

    /// The oldest LSN held, `nil` when empty.
    var firstLSN: UInt64? { records.first?.lsn }

    /// Adds the record at `lsn` (the one after the newest held; a gap starts the buffer afresh).
    mutating func append(lsn: UInt64, payload: [UInt8]) {
        if let last = records.last?.lsn, last + 1 != lsn { removeAll() }
        records.append((lsn, payload))
        bytes += payload.count
        while records.count > maxRecords || (bytes > maxBytes && records.count > 1), let dropped = records.popFirst() {
            bytes -= dropped.payload.count
        }
    }

    /// Up to `limit` payloads from LSN `lsn` on; `nil` when `lsn` is older than what is held.
    func payloads(from lsn: UInt64, limit: Int) -> [[UInt8]]? {
        guard let first = records.first?.lsn, lsn >= first else { return nil }
        let start = Int(lsn - first)
        guard start < records.count else { return [] }
        let end = min(records.count, start + limit)
        return (start..<end).map { records[$0].payload }
    }

    mutating func removeAll() {
        _ = records.removeAll()
        bytes = 0
    }
}
