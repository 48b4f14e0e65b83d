/// Where a table's key was found last, so that the next look-up of the same key costs a
/// comparison instead of hashing it.
///
/// Why: the authority looks clients up by their id, a string, several times per action, and a
/// client pipelining its actions is the same key thousands of times in a row (hashing it was
/// 7.6% of a sync authority's samples). Valid only while the table gains or loses no key: its
/// owner calls ``forget()`` before every insertion or removal (a change of a value in place keeps
/// the index valid, and so does a copy of the table). A stale index is never read silently:
/// Swift checks a dictionary index against its table and traps.
struct LastFound<Key: Hashable, Value> {
    private var last: (key: Key, index: Dictionary<Key, Value>.Index)?

    /// Where `key` is in `table`, if it is there.
    mutating func index(of key: Key, in table: [Key: Value]) -> Dictionary<Key, Value>.Index? {
        if let last, last.key == key { return last.index }
        guard let index = table.index(forKey: key) else { return nil }
        last = (key, index)
        return index
    }

    /// Drops what was found: to be called before `table` gains or loses a key.
    mutating func forget() { last = nil }
}

extension LastFound: Sendable where Key: Sendable, Value: Sendable {}
