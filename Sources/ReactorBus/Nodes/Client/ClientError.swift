import ReactorWire
import ZeroMQ
/// Why an ``ActionClient`` call failed. Every case says what to do about it.
public enum ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No answer after `attempts` sends of the same request (the first plus every retry).
    ///
    /// For an action it is unknown whether it was applied; sending it again as a *new* action may
    /// apply it twice.
    case timedOut(attempts: Int)
    /// No connection to the authority at `endpoint` for `waited` (the configuration's
    /// ``ActionClientConfiguration/connectTimeout``) while calls were waiting: nothing listens
    /// there, or it refuses the handshake (CURVE keys). Every waiting call fails with it.
    ///
    /// As with ``timedOut(attempts:)``, an action sent before the connection was lost may or may
    /// not have been applied.
    case unreachable(endpoint: String, waited: Duration)
    /// The authority answered with a protocol `error` (for example `busy`, `bad_action`, `stale`).
    case refused(code: ErrorCode, message: String)
    /// The client was closed (or never started) before the call was answered.
    case closed
    /// ZeroMQ failed underneath the client; the client is closed.
    case transport(ZMQError)
    /// The authority's answer does not follow the wire protocol, or its state does not decode as
    /// this reactor's state.
    case badReply(ProtocolError)
    /// The call or the configuration was invalid before anything was sent.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .timedOut(let attempts):
            "no answer from the authority after \(attempts) attempt\(attempts == 1 ? "" : "s"): check that it runs "
                + "and that the actions endpoint is right, or raise the timeout or retries; an unanswered action may or may not have been applied"
        case .unreachable(let endpoint, let waited):
            "the authority at \(endpoint) could not be reached for \(Self.seconds(waited)): check that it runs and listens on that endpoint "
                + "(and, with CURVE, that the keys match), or raise the connect timeout; an action sent before the connection was lost may or may not have been applied"
        case .refused(let code, let message):
            "the authority refused the request (\(code.rawValue)): \(message)" + Self.advice(for: code)
        case .closed:
            "the client is closed or was never started: call start() first, and do not use a client after close()"
        case .transport(let error):
            "ZeroMQ failed (\(error)); the client is closed: create a new one"
        case .badReply(let error):
            "the authority's answer is not understood (\(error)): check that client and authority run the same app and protocol version"
        case .invalidArgument(let message):
            "invalid argument: \(message)"
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        return milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000) s" : "\(Double(milliseconds) / 1_000) s"
    }

    private static func advice(for code: ErrorCode) -> String {
        switch code {
        case .busy: "; too many of this client's actions have unfinished effects and capacity did not free up in time: "
            + "raise the busy give-up time, add workers, or raise the authority's --max-in-flight"
        case .badAction: "; the payload does not decode as the app's action: check the app and the action's encoding"
        case .stale: "; the resend is older than the authority remembers, it may or may not have been applied"
        case .conflict: "; this client_seq was already used for another action: two clients may share one client id"
        case .unavailable: "; the authority cannot take actions now (see its log): resend with the same client_seq once it is back"
        case .unknownClient: "; the authority forgot this client id (raise its --max-clients): check the state before sending again, under a new client id"
        case .unsupportedVersion: "; upgrade the older side so both speak the same protocol version"
        case .malformed, .unknownKind: "; client and authority disagree on the protocol: check both versions"
        case .tooLarge: "; the message is over a limit the error names: send less at once, or raise that limit"
        case .expired: "; the authority no longer holds that version of the state: fetch the snapshot again"
        case .unknownWorker, .wrongApp: ""
        }
    }
}

/// What the authority answered to an action.
public struct ActionAck: Sendable, Hashable, CustomStringConvertible {
    /// The client's sequence number of the action.
    public var clientSeq: UInt64
    /// The authority's sequence number for the action (the same for every resend), or 0 when the
    /// action was applied long enough ago that the authority no longer keeps its ack: a resend is
    /// then acked with 0 and the current version, which includes the action.
    public var actionSeq: UInt64
    /// The state version right after the action's sync mutations.
    public var version: UInt64

    /// Creates an ack.
    public init(clientSeq: UInt64, actionSeq: UInt64, version: UInt64) {
        self.clientSeq = clientSeq
        self.actionSeq = actionSeq
        self.version = version
    }

    public var description: String { "ack client_seq \(clientSeq) action_seq \(actionSeq) version \(version)" }
}
