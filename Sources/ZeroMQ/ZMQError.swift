import CZMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed libzmq call: the `errno` it reported and the name of the call that failed.
///
/// Every throwing API of the transport layer throws this type, so callers can match on
/// ``code`` (or the `is…` shortcuts) instead of parsing text. The value is immutable and
/// `Sendable`; ``description`` is produced by `zmq_strerror`, which covers both system
/// errno values and libzmq's own codes (`ETERM`, `EFSM`, …).
public struct ZMQError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `errno` value reported by libzmq (for example `EAGAIN`, `ETERM`, `ENOTSOCK`).
    public let code: Int32
    /// The libzmq function that failed, e.g. `"zmq_bind"`.
    public let function: String
    /// The endpoint the call was given, for `zmq_bind` and `zmq_connect`: which of a node's
    /// sockets failed is what an operator needs to know first.
    public let endpoint: String?

    /// Creates an error from an errno value, the name of the failing call and, for calls that
    /// take one, the endpoint.
    public init(code: Int32, function: String, endpoint: String? = nil) {
        self.code = code
        self.function = function
        self.endpoint = endpoint
    }

    /// Text such as `zmq_bind tcp://*:7001: Address already in use (errno 98)`, from `zmq_strerror`.
    public var description: String {
        "\(function)\(endpoint.map { " " + $0 } ?? ""): \(ZMQError.message(for: code)) (errno \(code))"
    }

    /// The human-readable message libzmq gives for an errno value.
    public static func message(for code: Int32) -> String {
        guard let text = zmq_strerror(code) else { return "Unknown error" }
        return String(cString: text)
    }

    /// `true` when a non-blocking call could not proceed or a send/receive timeout expired (`EAGAIN`).
    public var isWouldBlock: Bool { code == Code.wouldBlock }
    /// `true` when the socket's context was shut down or terminated (`ETERM`).
    public var isTerminated: Bool { code == Code.terminated }
    /// `true` when a ROUTER with ``ZMQSocketOption/routerMandatory`` cannot route to the peer (`EHOSTUNREACH`).
    public var isHostUnreachable: Bool { code == Code.hostUnreachable }
    /// `true` when the socket was already closed (`ENOTSOCK`).
    public var isNotSocket: Bool { code == Code.notSocket }
    /// `true` when the operation is not valid in the socket's current state (`EFSM`, e.g. REQ sending twice).
    public var isInvalidState: Bool { code == Code.invalidState }

    /// Named errno values that the transport layer reports; compare them with ``ZMQError/code``.
    public enum Code {
        /// `EAGAIN`: would block, or a send/receive timeout expired.
        public static let wouldBlock: Int32 = EAGAIN
        /// `ETERM`: the context was shut down or terminated.
        public static let terminated: Int32 = ETERM
        /// `ENOTSOCK`: the socket is closed.
        public static let notSocket: Int32 = ENOTSOCK
        /// `EHOSTUNREACH`: a mandatory ROUTER cannot route the message.
        public static let hostUnreachable: Int32 = EHOSTUNREACH
        /// `EINVAL`: an invalid argument, option value or endpoint.
        public static let invalidArgument: Int32 = EINVAL
        /// `EPROTONOSUPPORT`: the endpoint's transport is not supported.
        public static let protocolNotSupported: Int32 = EPROTONOSUPPORT
        /// `EADDRINUSE`: the address is already bound.
        public static let addressInUse: Int32 = EADDRINUSE
        /// `ENOENT`: the endpoint to unbind or disconnect is unknown.
        public static let noEntry: Int32 = ENOENT
        /// `EFSM`: the operation is not valid in the socket's state machine.
        public static let invalidState: Int32 = EFSM
        /// `ENOTSUP`: the operation or capability is not supported by this build of libzmq.
        public static let notSupported: Int32 = ENOTSUP
        /// `EINTR`: interrupted by a signal (retried internally, never thrown by blocking calls).
        public static let interrupted: Int32 = EINTR
    }
}
