import ReactorApps

/// The state phase's actions on the `catalog` app, and how it checks the state an observer holds.
extension Catalog {
    /// Bytes of each generated entry: with its key and string header, 67 to 71 bytes of
    /// MessagePack per entry.
    static let benchEntryBytes = 64

    /// The keys the timed mix writes; every grown state has at least these.
    static let benchMixKeys = 8

    /// The action mix timed at every size: `put`s of 64-byte values over the first 8 keys, in
    /// turn, so the state keeps its size and every action is one small mutation.
    static let benchMix: [Action] = (0..<64).map { index in
        .put(key: index % benchMixKeys, value: entry(key: 1_000_000 + index, bytes: benchEntryBytes))
    }

    /// The fills that grow an empty catalog to about `bytes` of MessagePack: entries of
    /// ``benchEntryBytes`` from key 0, at most ``maxFillCount`` per action.
    static func benchFills(toAbout bytes: Int) -> [Action] {
        // Keys below 128 take 1 byte, below 65,536 3 bytes, then 5: about 71 bytes per entry.
        let perEntry = benchEntryBytes + 2 + (bytes < 8_192 ? 1 : 5)
        let entries = max(benchMixKeys, bytes / perEntry)
        return stride(from: 0, to: entries, by: maxFillCount).map { from in
            .fill(from: from, count: min(maxFillCount, entries - from), bytes: benchEntryBytes)
        }
    }

    /// The state after `grow` and then `count` actions of the mix, reduced here as the authority does.
    static func benchExpected(grow: [Action], count: Int) -> State {
        let reactor = Catalog()
        var state = reactor.initialState
        func apply(_ action: Action) {
            for mutation in reactor.mutate(state: state, action: action).sync { reactor.reduce(state: &state, mutation: mutation) }
        }
        grow.forEach(apply)
        // Only each key's last put survives: apply the last `benchMix.count` actions (or all).
        let first = max(0, count - benchMix.count)
        for index in first..<count { apply(benchMix[index % benchMix.count]) }
        return state
    }
}

extension Catalog.State {
    /// A digest of the entries that does not depend on the dictionary's order (which differs from
    /// process to process): the wrapping sum of each entry's FNV-1a hash, mixed with the count
    /// and `fills`. Two states with the same digest hold, with overwhelming likelihood, the same entries.
    var benchDigest: UInt64 {
        var sum: UInt64 = 0
        for (key, value) in entries {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            withUnsafeBytes(of: UInt64(bitPattern: Int64(key)).littleEndian) { bytes in
                for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            }
            for byte in value.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            sum &+= hash
        }
        return sum ^ (UInt64(entries.count) << 32) ^ UInt64(fills)
    }
}
