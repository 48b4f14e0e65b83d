import ZeroMQ
/// The authority's CURVE identity and, optionally, who may connect to each of its sockets.
public struct AuthoritySecurity: Sendable, Equatable {
    /// The authority's secret key (Z85).
    public var secretKey: String
    /// The matching public key, which clients need (`--curve-server-key`).
    public var publicKey: String
    /// A directory with `actions/`, `workers/` and `feed/` subdirectories of allowed client
    /// public keys (`*.pub`), or `nil` to admit any client that knows the server key.
    public var allowKeysDirectory: String?

    /// Derives the public key from `secretKey`.
    public init(secretKey: String, allowKeysDirectory: String?) throws(ZMQError) {
        self.secretKey = secretKey
        self.publicKey = try ZMQCurve.publicKey(fromSecret: secretKey)
        self.allowKeysDirectory = allowKeysDirectory
    }

    /// Makes `socket` a CURVE server whose peers ZAP checks under `domain`.
    func apply(to socket: ZMQSocket, domain: String) throws(ZMQError) {
        try socket.set(.curveServer, true)
        try socket.set(.curveSecretKey, secretKey)
        try socket.set(.zapDomain, domain)
    }
}

/// A client's (or worker's, or observer's) CURVE identity and the authority's public key.
public struct ClientSecurity: Sendable, Hashable {
    /// The authority's public key (Z85).
    public var serverKey: String
    /// This peer's secret key (Z85).
    public var secretKey: String
    /// This peer's public key, derived from the secret one; what the allowlist holds.
    public var publicKey: String

    /// Derives the public key from `secretKey`.
    public init(serverKey: String, secretKey: String) throws(ZMQError) {
        self.serverKey = serverKey
        self.secretKey = secretKey
        self.publicKey = try ZMQCurve.publicKey(fromSecret: secretKey)
    }

    /// Makes `socket` a CURVE client of the authority. Call before `connect`.
    package func apply(to socket: ZMQSocket) throws(ZMQError) {
        try socket.set(.curveServerKey, serverKey)
        try socket.set(.curvePublicKey, publicKey)
        try socket.set(.curveSecretKey, secretKey)
    }
}
