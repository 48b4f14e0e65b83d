/// The error codes of the wire protocol (docs/PROTOCOL.md, "Error codes").
public enum ErrorCode: String, Sendable, Hashable, CaseIterable {
    case malformed
    case unsupportedVersion = "unsupported_version"
    case unknownKind = "unknown_kind"
    case badAction = "bad_action"
    case busy
    case stale
    case conflict
    case unknownClient = "unknown_client"
    case unavailable
    case unknownWorker = "unknown_worker"
    case wrongApp = "wrong_app"
    /// A message over a limit of the receiver's (the message names the limit and its option).
    case tooLarge = "too_large"
    /// A `snapshot_chunk` request for a version the authority no longer holds: start again.
    case expired
}

/// A message that does not follow the wire protocol. Nothing it carried was applied.
public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The protocol error code to answer with.
    public var code: ErrorCode
    /// What exactly was wrong.
    public var message: String

    /// Creates an error.
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    static func malformed(_ message: String) -> ProtocolError { ProtocolError(.malformed, message) }

    public var description: String { "\(code.rawValue): \(message)" }
}
