/// Why a coordination call failed; each case's description says what to do about it.
public enum CoordinationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A setting that cannot work (an endpoint that is not `http://HOST:PORT`, a TTL under one
    /// second, a safety margin the keepalive cadence cannot honour, an empty app name).
    case invalidConfiguration(String)
    /// No endpoint answered (refused, cut or timed out); `reason` is the last endpoint's.
    case unreachable(endpoints: [String], reason: String)
    /// etcd answered with an error (a gRPC status in its JSON gateway's error body).
    case rejected(endpoint: String, status: Int, code: Int?, message: String)
    /// Something answered with what etcd's v3 JSON gateway does not send (not JSON, a field
    /// missing or of the wrong type).
    case badResponse(endpoint: String, detail: String)
    /// The leader key holds a value that is not a ``LeaderInfo`` in JSON.
    case malformedLeaderValue(key: String, detail: String)
    /// The campaign's deadline passed before this candidate won; `leader` is the last one seen.
    case campaignTimedOut(key: String, leader: Leader?)
    /// The campaign was cancelled through its ``CancellationFlag``.
    case cancelled

    public var description: String {
        switch self {
        case .invalidConfiguration(let detail):
            return "invalid coordination setting: \(detail)"
        case .unreachable(let endpoints, let reason):
            return "etcd unreachable at \(endpoints.joined(separator: ",")) (\(reason)): check that etcd runs and that the endpoint list names its client URLs"
        case .rejected(let endpoint, let status, let code, let message):
            let grpc = code.map { ", gRPC code \($0)" } ?? ""
            return "etcd at \(endpoint) refused the request (HTTP \(status)\(grpc)): \(message)"
        case .badResponse(let endpoint, let detail):
            return "unexpected answer from \(endpoint): \(detail); check that the endpoint is an etcd 3.4 or later client URL (v3 JSON gateway)"
        case .malformedLeaderValue(let key, let detail):
            return "the leader key \(key) holds a value that is not a leader description (\(detail)); something else writes under this app's key: delete the key or use another app name"
        case .campaignTimedOut(let key, let leader):
            let holder = leader.map { "\($0.info.name) (epoch \($0.epoch))" } ?? "nobody"
            return "did not win \(key) before the deadline; the leader is \(holder): stay a standby, or stop the leader first"
        case .cancelled:
            return "the campaign was cancelled"
        }
    }
}
