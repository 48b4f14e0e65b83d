import ReactorLog
import ZeroMQ

/// Answers ZeroMQ's authentication requests (ZAP, RFC 27) for the authority's CURVE sockets.
///
/// libzmq asks the REP socket bound at `inproc://zeromq.zap.01` of the same context about every
/// CURVE handshake; the handler admits a client only when its public key is in the
/// ``Allowlist`` for the socket's domain, and logs every refusal. Runs on the authority's loop.
final class ZAPHandler {
    static let endpoint = "inproc://zeromq.zap.01"

    private let socket: ZMQSocket
    private let allowlist: Allowlist
    private let logger: Logger
    /// Refused handshakes.
    private(set) var refused: UInt64 = 0

    init(context: ZMQContext, allowlist: Allowlist, logger: Logger) throws(ZMQError) {
        socket = try ZMQSocket(context: context, type: .rep)
        try socket.set(.linger, 0)
        try socket.bind(Self.endpoint)
        self.allowlist = allowlist
        self.logger = logger
    }

    /// The socket to poll.
    var pollable: ZMQSocket { socket }

    /// Answers every waiting request.
    func handleRequests(now: UInt64) throws(ZMQError) {
        while let request = try socket.tryReceiveMultipart() {
            try socket.send(answer(request, now: now))
        }
    }

    func close() { socket.close() }

    /// The reply frames for one request: `[version, request_id, status, text, user_id, metadata]`.
    func answer(_ request: [[UInt8]], now: UInt64) -> [[UInt8]] {
        guard request.count >= 6, String(decoding: request[0], as: UTF8.self) == "1.0" else {
            refused += 1
            logger.warning("malformed ZAP request refused")
            return [Array("1.0".utf8), request.count > 1 ? request[1] : [], Array("500".utf8), Array("malformed request".utf8), [], []]
        }
        let id = request[1]
        let domain = String(decoding: request[2], as: UTF8.self)
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        func reply(_ code: String, _ text: String, user: String = "") -> [[UInt8]] {
            [Array("1.0".utf8), id, Array(code.utf8), Array(text.utf8), Array(user.utf8), []]
        }
        guard mechanism == "CURVE", request.count >= 7, request[6].count == 32, let key = try? ZMQCurve.z85Encode(request[6]) else {
            refused += 1
            logger.warning("refused a \(mechanism) peer from \(address) on the \(domain) socket: CURVE keys required")
            return reply("400", "CURVE required")
        }
        guard allowlist.allows(key, domain: domain, now: now) else {
            refused += 1
            logger.warning("refused client key \(key) from \(address) on the \(domain) socket: not in the allowlist")
            return reply("400", "key not allowed")
        }
        logger.debug("admitted client key \(key) from \(address) on the \(domain) socket")
        return reply("200", "OK", user: key)
    }
}
