import MessagePack

/// The encoded states the authority holds for `snapshot_chunk` requests, by version.
///
/// A requester fetches a state of any size in chunks it asks for one at a time (or a few ahead,
/// with credit), so the state must stay the same bytes across its requests while the authority
/// goes on applying mutations. Each version fetched is encoded once and kept while it is used:
/// at most ``maxVersions`` versions (the least recently used goes first), and none longer than
/// ``idleMilliseconds`` after its last chunk. A chunk of a version no longer held is answered
/// `expired`, and the requester starts again with the current state.
struct SnapshotTransfers {
    /// Versions held at once (each costs one encoded state's memory).
    static let maxVersions = 4
    /// A version not asked for this long is dropped.
    static let idleMilliseconds: UInt64 = 30_000
    /// The largest chunk sent, whatever a requester asks for.
    static let maxChunkBytes: UInt64 = 4 << 20

    struct Held {
        var actionSeq: UInt64
        var bytes: EncodedBytes
        var lastUsed: UInt64
    }

    private var held: [UInt64: Held] = [:]

    /// The bytes held for `version`, marked as used `now`; `nil` when not held (or expired).
    mutating func bytes(of version: UInt64, now: UInt64) -> Held? {
        expire(now: now)
        guard var entry = held[version] else { return nil }
        entry.lastUsed = now
        held[version] = entry
        return entry
    }

    /// Holds `bytes` as the encoding of `version`, dropping the least recently used over the bound.
    mutating func hold(_ bytes: EncodedBytes, version: UInt64, actionSeq: UInt64, now: UInt64) {
        expire(now: now)
        held[version] = Held(actionSeq: actionSeq, bytes: bytes, lastUsed: now)
        while held.count > Self.maxVersions, let oldest = held.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
            held[oldest] = nil
        }
    }

    /// How many versions are held.
    var count: Int { held.count }

    private mutating func expire(now: UInt64) {
        guard !held.isEmpty else { return }
        held = held.filter { now < $0.value.lastUsed + Self.idleMilliseconds }
    }
}
