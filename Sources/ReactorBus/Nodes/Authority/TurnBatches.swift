/// Entries a turn owes several peers (jobs for workers, acks for clients), gathered into one
/// message per peer at the place in the turn's messages where the peer's first entry was.
///
/// Order is kept per peer, which is all the protocol promises (each peer has its own
/// connection): a batch is closed by any other message to its peer (``close(_:)``), so what was
/// queued after an entry still arrives after it, and an entry queued after that starts a new
/// batch. A batch also closes before it would outgrow its byte limit.
struct TurnBatches<Key: Hashable, Entry> {
    /// One peer's entries and where their message goes.
    struct Batch {
        /// The message's index in the turn's messages for the socket.
        let slot: Int
        let key: Key
        var entries: [Entry]
        var bytes: Int
        let limit: Int
    }

    private var batches: [Batch] = []
    /// The batch each peer's next entry joins; the last entry's peer may be only in ``last``.
    private var open: [Key: Int] = [:]
    /// The peer of the last entry and its open batch, checked before hashing (entries for one
    /// peer come in runs), and whether ``open`` has it too: a batch goes into the table only
    /// once an entry for another peer follows, so a turn that answers one peer hashes nothing.
    private var last: (key: Key, index: Int, inTable: Bool)?

    /// Whether no entry waits to be packed.
    var isEmpty: Bool { batches.isEmpty }

    /// Adds `entry`, `bytes` long, to `key`'s open batch when it fits that batch's limit, else to
    /// a new batch at `slot` that starts at `headerBytes` and may hold `limit` bytes. Returns
    /// whether it opened one: the caller then reserves `slot` in its messages.
    mutating func add(_ entry: Entry, bytes: Int, for key: Key, slot: Int, headerBytes: Int, limit: Int) -> Bool {
        var found: (index: Int, inTable: Bool)?
        if let last, last.key == key {
            found = (last.index, last.inTable)
        } else {
            if let last, !last.inTable { open[last.key] = last.index }
            found = open.isEmpty ? nil : open[key].map { ($0, true) }
        }
        if let found, batches[found.index].bytes + bytes <= batches[found.index].limit {
            batches[found.index].entries.append(entry)
            batches[found.index].bytes += bytes
            last = (key, found.index, found.inTable)
            return false
        }
        // A new batch; the table's entry for the peer, if any, is its full one until replaced.
        if found?.inTable == true { open[key] = batches.count }
        last = (key, batches.count, found?.inTable == true)
        batches.append(Batch(slot: slot, key: key, entries: [entry], bytes: headerBytes + bytes, limit: limit))
        return true
    }

    /// Closes `key`'s open batch: another message to that peer follows it.
    mutating func close(_ key: Key) {
        if let last, last.key == key {
            self.last = nil
            if !last.inTable { return }
        }
        if !open.isEmpty { open[key] = nil }
    }

    /// Hands each batch to `body`, in the order they were opened; empties them (keeping the
    /// storage for the next turn).
    mutating func drain(_ body: (Batch) -> Void) {
        for batch in batches { body(batch) }
        batches.removeAll(keepingCapacity: true)
        open.removeAll(keepingCapacity: true)
        last = nil
    }
}
