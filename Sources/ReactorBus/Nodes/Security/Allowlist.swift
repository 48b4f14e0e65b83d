import Foundation

/// Public keys allowed on each of the authority's sockets, read from a directory:
/// `DIR/actions/*.pub`, `DIR/workers/*.pub`, `DIR/feed/*.pub`, one Z85 key per file.
///
/// Keys are separate per socket, so an observer's key does not let it act as a worker. The
/// directory is read again when it is consulted and a second has passed since the last read,
/// so keys can be added or removed without a restart.
final class Allowlist {
    /// The ZAP domains, one per authority socket.
    static let domains = ["actions", "workers", "feed"]

    private let directory: String
    private var keys: [String: Set<String>] = [:]
    private var loadedAt: UInt64 = 0

    init(directory: String) {
        self.directory = directory
        reload(now: MonotonicClock.milliseconds())
    }

    /// Whether `key` (Z85) may connect to the socket of `domain`.
    func allows(_ key: String, domain: String, now: UInt64) -> Bool {
        if now >= loadedAt + 1_000 { reload(now: now) }
        return keys[domain]?.contains(key) ?? false
    }

    /// How many keys each domain has.
    var counts: [String: Int] { keys.mapValues(\.count) }

    private func reload(now: UInt64) {
        loadedAt = now
        var loaded: [String: Set<String>] = [:]
        for domain in Self.domains {
            let folder = directory + "/" + domain
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            loaded[domain] = Set(files.filter { $0.hasSuffix(".pub") }.compactMap { try? CurveKeyFile.read(folder + "/" + $0) })
        }
        keys = loaded
    }
}
