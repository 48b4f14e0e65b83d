import Foundation
import ZeroMQ

/// Public keys allowed on each of the authority's sockets, read from a directory:
/// `DIR/actions/*.pub`, `DIR/workers/*.pub`, `DIR/feed/*.pub`, `DIR/replication/*.pub`, one Z85
/// key per file.
///
/// Keys are separate per socket, so an observer's key does not let it act as a worker. The
/// directory is read again when it is consulted and a second has passed since the last read,
/// so keys can be added or removed without a restart.
///
/// The replication socket hands out the whole journal, so it is never open to any key: it
/// admits the authority's own key (the authorities that stand in for each other share one key
/// pair, as their clients list them all under one server key, and a standby connects with it)
/// and the keys under `replication/`. Without a directory the other sockets admit any key.
final class Allowlist {
    /// The ZAP domains, one per authority socket.
    static let domains = ["actions", "workers", "feed", "replication"]

    private let directory: String?
    private let authorityKey: String
    private var keys: [String: Set<String>] = [:]
    private var loadedAt: UInt64 = 0

    /// An allowlist read from `directory` (`nil`: any key on the client sockets), with
    /// `authorityKey` (Z85) admitted on the replication socket.
    init(directory: String?, authorityKey: String) {
        self.directory = directory
        self.authorityKey = authorityKey
        reload(now: MonotonicClock.milliseconds())
    }

    /// Whether `key` (Z85) may connect to the socket of `domain`.
    func allows(_ key: String, domain: String, now: UInt64) -> Bool {
        if domain == "replication", key == authorityKey { return true }
        guard directory != nil else { return domain != "replication" }
        if now >= loadedAt + 1_000 { reload(now: now) }
        return keys[domain]?.contains(key) ?? false
    }

    /// How many keys each domain has (none without a directory).
    var counts: [String: Int] { keys.mapValues { $0.count } }

    private func reload(now: UInt64) {
        loadedAt = now
        guard let directory else { return }
        var loaded: [String: Set<String>] = [:]
        for domain in Self.domains {
            let folder = directory + "/" + domain
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            loaded[domain] = Set(files.filter { $0.hasSuffix(".pub") }.compactMap { try? CurveKeyFile.read(folder + "/" + $0) })
        }
        keys = loaded
    }
}
