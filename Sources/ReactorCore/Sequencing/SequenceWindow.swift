/// A map from sequence numbers to values, for keys that arrive in increasing order and mostly
/// leave in about that order, as actions with running effects do: the job ledger's open jobs
/// and the authority's clients of running actions.
///
/// Why not a dictionary: with a backlog of 150,000 actions waiting for workers, every insert and
/// removal in a hash table lands on a random bucket, a cache miss or three (its bitmap, its key
/// and its value). Here the keys from the oldest one held on sit in one ring, at
/// `key - first`: an insert writes next to the previous one, and a removal of the oldest
/// moves the start along.
///
/// A key inserted below the ring's start, or left behind by a long run of removed keys after
/// it (an action whose effect runs for an hour while a million others finish), moves to a
/// dictionary: the ring is at most eight times as long as the entries it holds (or 4,096
/// slots), so memory follows the entries held, never the keys passed. Every operation is O(1),
/// amortised.
///
/// Each key is held in one place: its ring slot, or the dictionary. A key may sit in the
/// dictionary while the ring's range covers its (empty) slot: it left the ring, and the ring
/// later started again below it. So an empty slot is looked up in the dictionary too, which
/// costs nothing while the dictionary is empty, as it is in the usual, in-order case.
@usableFromInline
package struct SequenceWindow<Value> {
    /// The ring: slot `(head + i) & mask` is key `first + i`, for `i` in `0 ..< span`.
    @usableFromInline var slots: [Value?] = []
    @usableFromInline var head = 0
    /// Slots in use, from the first key held in the ring to the last (nil where removed).
    @usableFromInline var span = 0
    @usableFromInline var first: UInt64 = 0
    /// Values held in the ring.
    @usableFromInline var inRing = 0
    /// Entries that left the ring.
    @usableFromInline var stragglers: [UInt64: Value] = [:]

    /// The ring's length below which it is never emptied into the dictionary.
    @inlinable package static var minimumSpan: Int { 4_096 }

    @inlinable package init() {}

    /// Entries held.
    @inlinable package var count: Int { inRing + stragglers.count }

    @inlinable package var isEmpty: Bool { count == 0 }

    /// Slots of the ring in use, from its first key to its last (for tests and diagnostics).
    package var ringSpan: Int { span }

    /// The value for `key`, if held.
    @inlinable package subscript(key: UInt64) -> Value? {
        if let slot = ringSlot(of: key), let value = slots[slot] { return value }
        return stragglers.isEmpty ? nil : stragglers[key]
    }

    /// Holds `value` for `key` (replacing what was held for it).
    @inlinable package mutating func insert(_ value: Value, for key: UInt64) {
        if let slot = ringSlot(of: key) {
            if slots[slot] == nil {
                inRing += 1
                forgetStraggler(key)
            }
            slots[slot] = value
            return
        }
        if span == 0 {
            forgetStraggler(key)
            first = key
            head = 0
            append(value)
            return
        }
        guard key >= first + UInt64(span) else {
            stragglers[key] = value
            return
        }
        // After the ring's end; a gap of keys that were never held is padded, unless the ring
        // would get too sparse: then what it holds moves out and it starts again at `key`.
        let gap = key - (first + UInt64(span))
        let room = Self.limit(for: inRing + 1) - span - 1
        guard room >= 0, gap <= UInt64(room) else {
            emptyRing()
            insert(value, for: key)
            return
        }
        forgetStraggler(key)
        for _ in 0 ..< gap { append(nil) }
        append(value)
    }

    /// Removes and returns the value for `key`, if held.
    @inlinable @discardableResult
    package mutating func removeValue(for key: UInt64) -> Value? {
        guard let index = ringSlot(of: key) else { return stragglers.removeValue(forKey: key) }
        guard let value = slots[index] else { return stragglers.isEmpty ? nil : stragglers.removeValue(forKey: key) }
        slots[index] = nil
        inRing -= 1
        // The start moves past removed keys: the oldest one held leads again.
        while span > 0, slots[head] == nil {
            head = slot(at: 1)
            first += 1
            span -= 1
        }
        if span > Self.limit(for: inRing) { emptyRing() }
        return value
    }

    /// Runs `body` on the value for `key` in place; `nil` when none is held.
    @inlinable
    package mutating func update<T>(_ key: UInt64, _ body: (inout Value) throws -> T) rethrows -> T? {
        if let slot = ringSlot(of: key), slots[slot] != nil { return try body(&slots[slot]!) }
        guard !stragglers.isEmpty, let index = stragglers.index(forKey: key) else { return nil }
        return try body(&stragglers.values[index])
    }

    /// Calls `body` with every entry, in no particular order.
    package func forEach(_ body: (UInt64, Value) throws -> Void) rethrows {
        for (key, value) in stragglers { try body(key, value) }
        for offset in 0 ..< span {
            if let value = slots[slot(at: offset)] { try body(first + UInt64(offset), value) }
        }
    }

    /// Every entry, as a dictionary (for checkpoints).
    package var entries: [UInt64: Value] {
        var all: [UInt64: Value] = [:]
        forEach { all[$0] = $1 }
        return all
    }

    // MARK: Internals

    /// The longest ring allowed for `held` values in it.
    @inlinable static func limit(for held: Int) -> Int { max(minimumSpan, 8 * held) }

    /// Drops `key` from the dictionary: it is about to be held in the ring.
    @inlinable mutating func forgetStraggler(_ key: UInt64) {
        if !stragglers.isEmpty { stragglers[key] = nil }
    }

    /// The storage index of the ring's `offset`-th key (the storage is a power of two long).
    @inlinable func slot(at offset: Int) -> Int { (head + offset) & (slots.count - 1) }

    /// The storage index of `key` when it is within the ring's range (its slot may be empty).
    @inlinable func ringSlot(of key: UInt64) -> Int? {
        guard key >= first, key - first < UInt64(span) else { return nil }
        return slot(at: Int(key - first))
    }

    @inlinable mutating func append(_ value: Value?) {
        if span == slots.count { grow() }
        slots[slot(at: span)] = value
        span += 1
        if value != nil { inRing += 1 }
    }

    /// Doubles the ring (a power of two, so that a slot is an AND away).
    ///
    /// Inlinable like the rest: compiled once for any `Value`, its loop asked the runtime for
    /// the storage's type on every slot it copied (a tenth of the async authority's lookups).
    @inlinable mutating func grow() {
        var grown = [Value?](repeating: nil, count: max(64, slots.count * 2))
        for offset in 0 ..< span { grown[offset] = slots[slot(at: offset)] }
        slots = grown
        head = 0
    }

    /// Moves what the ring holds to the dictionary and empties it, keeping its storage.
    @inlinable mutating func emptyRing() {
        for offset in 0 ..< span {
            let index = slot(at: offset)
            if let value = slots[index] { stragglers[first + UInt64(offset)] = value }
            slots[index] = nil
        }
        span = 0
        head = 0
        inRing = 0
    }
}

extension SequenceWindow: Sendable where Value: Sendable {}

extension SequenceWindow {
    /// A window holding `entries`.
    package init(_ entries: [UInt64: Value]) {
        self.init()
        for (key, value) in entries.sorted(by: { $0.key < $1.key }) { insert(value, for: key) }
    }
}
