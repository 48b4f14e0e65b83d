import Foundation
import ReactorWire

/// How an ``ActionClient`` talks to the authority's actions socket.
public struct ActionClientConfiguration: Sendable {
    /// The authority's actions endpoint, e.g. `tcp://127.0.0.1:7001`; or several, separated by
    /// commas (`tcp://10.0.0.1:7001,tcp://10.0.0.2:7001`), when standby authorities can take over:
    /// the client talks to the first, and when it loses it (no connection for
    /// ``failoverAfter``, or no `pong` to its probe within ``timeout``) it moves to the next,
    /// round robin, and resends every unacknowledged action with the same `client_seq`.
    public var actionsEndpoint: String
    /// This client's identity for idempotent retry: 1–64 bytes of UTF-8, unique per client process.
    ///
    /// Resends carry the same `(clientID, client_seq)`, so the authority applies an action at most
    /// once and acks a resend with the original `action_seq`. Two clients sharing an id would see
    /// each other's acks, so keep the default (a random UUID) unless you restore a known client.
    public var clientID: String
    /// How long to wait for the answer to one attempt, over a live connection, before resending it.
    public var timeout: Duration
    /// How many times an unanswered action or request is resent before it fails with
    /// ``ClientError/timedOut(attempts:)``; `retries + 1` attempts in all.
    public var retries: Int
    /// The most actions sent and not yet answered. Further `send` calls wait (suspended, in
    /// call order) until an answer frees a slot. Clamped to 1...4,096, which bounds the
    /// client's memory and the resends after a reconnect. (The authority remembers every accepted
    /// `client_seq` exactly, so a resend is never applied twice whatever the window; only the
    /// acks of the last `--remembered-acks` carry their original `action_seq`.)
    public var window: Int
    /// The largest message accepted from the authority, and the largest action payload sent
    /// (the authority drops bigger messages and resets the connection). Default 1 MiB, as the authority.
    public var maxMessageBytes: Int
    /// How long calls wait while the authority cannot be reached (never connected, or the
    /// connection lost) before they all fail with ``ClientError/unreachable(endpoint:waited:)``.
    /// Attempts do not time out while there is no connection: what is unanswered is resent as
    /// soon as the connection is back. Default 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// With several endpoints in ``actionsEndpoint``: how long the client waits for a connection
    /// to one before it tries the next. Default 1 s.
    public var failoverAfter: Duration = .seconds(1)
    /// How `busy` refusals are waited out; see ``BusyBackoff``.
    public var busyBackoff = BusyBackoff()
    /// The app whose actions this client sends. When set, no action leaves before the authority
    /// said (in its `pong`, asked for on every connection) that it serves this app; one that
    /// serves another ends the client: every call fails with `refused(wrong_app)`. `nil` sends
    /// at once to any authority.
    public var appName: String? = nil
    /// The app's schema this client speaks. An authority whose `pong` names a version neither
    /// side declares compatible ends the client like another app does (`refused(wrong_app)`);
    /// `nil` accepts any version.
    public var schema: AppSchema? = nil
    /// CURVE keys for talking to an authority that has CURVE on; `nil` for plain text.
    public var security: ClientSecurity? = nil

    /// The largest window.
    public static let maximumWindow = 4_096

    /// Creates a configuration; every parameter but the endpoint has the documented default.
    public init(
        actionsEndpoint: String,
        clientID: String = UUID().uuidString,
        timeout: Duration = .seconds(5),
        retries: Int = 3,
        window: Int = 1_000,
        maxMessageBytes: Int = 1 << 20
    ) {
        self.actionsEndpoint = actionsEndpoint
        self.clientID = clientID
        self.timeout = timeout
        self.retries = retries
        self.window = window
        self.maxMessageBytes = maxMessageBytes
    }

    /// Checks what the wire protocol requires of the values.
    func validated() throws(ClientError) -> ActionClientConfiguration {
        if let problem = AuthorityEndpoints.problem(in: actionsEndpoint, setting: "actionsEndpoint") { throw .invalidArgument(problem) }
        let idBytes = clientID.utf8.count
        guard idBytes >= 1, idBytes <= ClientMessage.maxClientIDBytes else {
            throw .invalidArgument("clientID must be 1–\(ClientMessage.maxClientIDBytes) bytes of UTF-8, got \(idBytes)")
        }
        guard retries >= 0 else { throw .invalidArgument("retries must not be negative, got \(retries)") }
        guard timeout > .zero else { throw .invalidArgument("timeout must be positive, got \(timeout)") }
        guard connectTimeout > .zero else { throw .invalidArgument("connectTimeout must be positive, got \(connectTimeout)") }
        guard failoverAfter > .zero else { throw .invalidArgument("failoverAfter must be positive, got \(failoverAfter)") }
        try busyBackoff.validate()
        guard maxMessageBytes > 0 else { throw .invalidArgument("maxMessageBytes must be positive, got \(maxMessageBytes)") }
        var copy = self
        copy.window = min(max(window, 1), Self.maximumWindow)
        return copy
    }
}
