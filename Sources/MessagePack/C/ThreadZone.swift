import CMsgPack

/// The calling thread's msgpack-c zones, reused by every unpack on that thread: one per level
/// of nesting.
///
/// Why: `msgpack_unpack_next` creates a zone (an 8 KiB `malloc`) for every value and frees
/// it afterwards; a node unpacks several small values per action, and those allocations and
/// the heap consolidation they caused were a visible part of its profile. `msgpack_unpack`
/// into a kept zone, cleared after each use, bump-allocates in the same chunk instead.
///
/// An unpack nested in another on the same thread (a message's body read while its header is
/// in use, an `init(from:)` that decodes bytes of its own) needs a zone of its own, as the
/// outer tree is still in use: the thread keeps one per depth (up to ``keptDepth``), so a
/// worker reading a batch of jobs inside its header no longer made and freed a zone per message.
/// A zone's first chunk is ``chunkBytes``, which a batch of hundreds of jobs fits in (with
/// 8 KiB chunks it took about six more chunks, each a `malloc` that consolidated the heap, and
/// freed again by the next clear). Clearing keeps the first chunk only, so a thread that once
/// unpacked a large value does not keep its memory.
///
/// Thread rules: the zones belong to their thread (a pthread key; the thread's exit frees them)
/// and an unpack never suspends, so no other code uses them meanwhile.
final class ThreadZone {
    /// The size of each kept zone's first chunk: 64 KiB.
    static var chunkBytes: Int { 64 << 10 }
    /// Nesting depths that keep a zone; deeper unpacks (rare) make and free their own.
    static var keptDepth: Int { 4 }

    // Both `@exclusivity(unchecked)`: the object belongs to its thread and each access is over
    // before `body` runs (a nested unpack enters again), so no two can overlap; the run-time
    // checks showed in every decode in a busy authority's profile.
    /// The zones made so far, by depth.
    @exclusivity(unchecked) private var zones: [UnsafeMutablePointer<msgpack_zone>] = []
    /// How many zones are in use now (the depth of the unpack running).
    @exclusivity(unchecked) private var depth = 0

    private init() {}

    deinit {
        for zone in zones { msgpack_zone_free(zone) }
    }

    /// Calls `body` with a zone to unpack into; what `body` allocates there is released when it
    /// returns.
    static func withZone<R>(_ body: (UnsafeMutablePointer<msgpack_zone>) throws -> R) throws -> R {
        guard let owner = current, let zone = owner.enter() else { return try withOwnZone(body) }
        defer {
            msgpack_zone_clear(zone)
            owner.depth -= 1
        }
        return try body(zone)
    }

    /// The zone of the next depth, made on first use; `nil` beyond ``keptDepth`` or when no
    /// zone can be made.
    private func enter() -> UnsafeMutablePointer<msgpack_zone>? {
        guard depth < Self.keptDepth else { return nil }
        if depth == zones.count {
            guard let zone = msgpack_zone_new(Self.chunkBytes) else { return nil }
            zones.append(zone)
        }
        depth += 1
        return zones[depth - 1]
    }

    /// A zone for one call only: unpacks nested deeper than ``keptDepth``, and a thread whose
    /// zones could not be made.
    private static func withOwnZone<R>(_ body: (UnsafeMutablePointer<msgpack_zone>) throws -> R) throws -> R {
        guard let zone = msgpack_zone_new(Int(MSGPACK_ZONE_CHUNK_SIZE)) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Out of memory for a msgpack-c zone."))
        }
        defer { msgpack_zone_free(zone) }
        return try body(zone)
    }

    /// The zones the calling thread keeps now (one per depth its unpacks reached, up to
    /// ``keptDepth``).
    static var keptOnThisThread: Int { current?.zones.count ?? 0 }

    /// Each thread's zones, freed at the thread's exit.
    private static let local = ThreadLocalObject<ThreadZone>()

    /// This thread's zones, made on first use; `nil` when no key could be made.
    private static var current: ThreadZone? { local.current { ThreadZone() } }
}
