import CMsgPack

/// The calling thread's msgpack-c zone, reused by every unpack on that thread.
///
/// Why: `msgpack_unpack_next` creates a zone (an 8 KiB `malloc`) for every value and frees
/// it afterwards; a node unpacks several small values per action, and those allocations and
/// the heap consolidation they caused were a visible part of its profile. `msgpack_unpack`
/// into a kept zone, cleared after each use, bump-allocates in the same chunk instead.
/// Clearing keeps the zone's first chunk only, so a thread that once unpacked a large value
/// does not keep its memory.
///
/// Thread rules: the zone belongs to its thread (a pthread key; the thread's exit frees it)
/// and an unpack never suspends, so no other code uses it meanwhile. An unpack nested in
/// another on the same thread (an `init(from:)` that decodes bytes of its own) gets a
/// zone of its own, as the outer tree is still in use.
final class ThreadZone {
    private let zone: UnsafeMutablePointer<msgpack_zone>
    private var inUse = false

    private init?() {
        guard let zone = msgpack_zone_new(Int(MSGPACK_ZONE_CHUNK_SIZE)) else { return nil }
        self.zone = zone
    }

    deinit {
        msgpack_zone_free(zone)
    }

    /// Calls `body` with a zone to unpack into; what `body` allocates there is released when it
    /// returns.
    static func withZone<R>(_ body: (UnsafeMutablePointer<msgpack_zone>) throws -> R) throws -> R {
        guard let owner = current, !owner.inUse else { return try withOwnZone(body) }
        owner.inUse = true
        defer {
            msgpack_zone_clear(owner.zone)
            owner.inUse = false
        }
        return try body(owner.zone)
    }

    /// A zone for one call only: nested unpacks, and a thread whose zone could not be made.
    private static func withOwnZone<R>(_ body: (UnsafeMutablePointer<msgpack_zone>) throws -> R) throws -> R {
        guard let zone = msgpack_zone_new(Int(MSGPACK_ZONE_CHUNK_SIZE)) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Out of memory for a msgpack-c zone."))
        }
        defer { msgpack_zone_free(zone) }
        return try body(zone)
    }

    /// Each thread's zone, freed at the thread's exit.
    private static let local = ThreadLocalObject<ThreadZone>()

    /// This thread's zone, made on first use; `nil` when no key or zone could be made.
    private static var current: ThreadZone? { local.current { ThreadZone() } }
}
