/// What the authority's loop holds back until the journal has it on disk (group commit).
///
/// Each turn's outbox waits for the LSN its records end at; an outbox with no records waits for
/// the journal's end at its turn, so nothing overtakes an older outbox: acks, jobs and feed
/// messages leave in turn order, each only once every record it depends on is durable.
struct CommitQueue<Element> {
    private var held = Deque<(lsn: UInt64, element: Element)>()

    /// Outboxes waiting.
    var count: Int { held.count }
    var isEmpty: Bool { held.isEmpty }

    /// Holds `element` until `lsn` is durable.
    mutating func hold(_ element: Element, until lsn: UInt64) {
        held.append((lsn, element))
    }

    /// Takes, oldest first, every element whose LSN is durable, stopping at the first that is not.
    mutating func release(durableThrough durable: UInt64) -> [Element] {
        var released: [Element] = []
        while let first = held.first, first.lsn <= durable {
            _ = held.popFirst()
            released.append(first.element)
        }
        return released
    }

    /// Takes everything, oldest first (when the journal failed, or to release all at a stop).
    mutating func removeAll() -> [Element] {
        held.removeAll().map(\.element)
    }
}
