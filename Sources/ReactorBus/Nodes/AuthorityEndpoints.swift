import Foundation

/// The authority endpoints a client, worker or observer may talk to, tried in order.
///
/// A node's endpoint setting (``ActionClientConfiguration/actionsEndpoint``,
/// ``WorkerConfiguration/authorityEndpoint``, ``ObserverConfiguration/feedEndpoint`` and
/// ``ObserverConfiguration/actionsEndpoint``) holds one endpoint, or several separated by commas
/// when standby authorities can take over from the one serving. The node talks to one at a time,
/// starting with the first; when it loses that one (its own detection: no connection, no `pong`,
/// missed heartbeats, a silent feed) it moves to the next, round robin. With one endpoint it
/// never moves, and behaves as it always did.
struct AuthorityEndpoints: Sendable, Hashable {
    /// Every endpoint, in the order given.
    let all: [String]
    /// The position of the one in use.
    private(set) var index = 0

    /// The endpoints of `text`, split at commas, spaces around each trimmed; text without a comma
    /// is the one endpoint as it is. Check ``problem(in:setting:)`` first.
    init(_ text: String) {
        all = text.contains(",") ? Self.entries(of: text) : [text]
    }

    /// The endpoint in use.
    var current: String { all[index] }

    /// Whether there is another endpoint to move to.
    var isList: Bool { all.count > 1 }

    /// Moves to the next endpoint (after the last, the first again) and returns it.
    @discardableResult
    mutating func advance() -> String {
        index = (index + 1) % all.count
        return current
    }

    /// The entries of a comma-separated list, trimmed; empty entries included.
    static func entries(of text: String) -> [String] {
        text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// What is wrong with `text` as a list of endpoints, naming the bad entry, or `nil` when each
    /// entry is of the form `TRANSPORT://ADDRESS` with a transport of tcp, ipc or inproc. One endpoint (no comma) is left to ZeroMQ to
    /// judge when the node connects, as it always was. `setting` names the value in the message.
    static func problem(in text: String, setting: String) -> String? {
        guard text.contains(",") else { return nil }
        for (position, entry) in entries(of: text).enumerated() {
            let which = "\(setting) '\(text)': entry \(position + 1) '\(entry)'"
            if entry.isEmpty { return "\(which) is empty; separate endpoints with single commas" }
            guard let separator = entry.range(of: "://"), !entry[..<separator.lowerBound].isEmpty, !entry[separator.upperBound...].isEmpty else {
                return "\(which) is not an endpoint (e.g. tcp://127.0.0.1:7001)"
            }
            // Checked now, as ZeroMQ would only refuse it when the node moves there.
            let transport = entry[..<separator.lowerBound]
            guard ["tcp", "ipc", "inproc"].contains(transport) else {
                return "\(which) has transport '\(transport)'; use tcp, ipc or inproc"
            }
        }
        return nil
    }
}
