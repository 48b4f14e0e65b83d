import CZMQ

/// One libzmq socket: endpoints, lifetime, and (in extensions) sending, receiving and options.
///
/// Threads: libzmq sockets are not thread-safe, so `ZMQSocket` is deliberately a
/// non-`Sendable` class. Swift 6 strict concurrency therefore refuses to share a socket
/// between threads or tasks: a socket is created and used by the one loop thread that owns it.
/// Other threads talk to that loop through a ``Mailbox`` that the loop polls next to its sockets.
///
/// Lifetime: ``close()`` is idempotent. After it, every operation throws ``ZMQError`` with
/// `ENOTSOCK` without touching the freed libzmq pointer. New sockets get a bounded linger of
/// ``defaultLinger`` milliseconds, and a socket that is never closed explicitly is closed in
/// `deinit` with a linger of at most ``defaultLinger``, so an unclosed socket can never make
/// context termination wait forever.
package final class ZMQSocket {
    /// Linger, in milliseconds, applied to every new socket and the upper bound used when
    /// `deinit` closes a socket its owner forgot: pending outgoing messages get this long to
    /// be flushed after close, then they are dropped.
    package static let defaultLinger = 100

    /// The pattern this socket implements.
    package let type: ZMQSocketType
    /// The context the socket was created from; kept alive as long as the socket exists.
    package let context: ZMQContext

    /// The libzmq socket, `nil` once closed.
    private(set) var handle: UnsafeMutableRawPointer?
    /// Message storage reused by every receive: initialised, filled and closed per frame.
    let message: UnsafeMutablePointer<zmq_msg_t>
    /// How many times the libzmq socket was used: any call may process the socket's pending
    /// commands and so take the signal off its ``ZMQPoller`` descriptor (see there).
    private(set) var operations: UInt64 = 0
    /// The first frame of the last message received, when short: on a ROUTER that is the
    /// sender's routing id, the same for every message of a burst from one peer, so the next
    /// message with the same bytes shares this array instead of allocating its own.
    var lastFirstFrame: [UInt8] = []
    /// The last message received, also handed to the caller: a loop that lets go of a message
    /// before it receives the next leaves this the only reference, and the next message is read
    /// into the same arrays instead of new ones (see `receiveMultipart(flags:)`).
    var lastMessage: [[UInt8]] = []

    /// Creates a socket of the given type in `context`, with linger set to ``defaultLinger``.
    ///
    /// - Throws: ``ZMQError`` with `ETERM` if the context is shut down or terminated, `EMFILE`
    ///   when libzmq's socket limit is reached, or `EINVAL` for an unsupported type.
    package init(context: ZMQContext, type: ZMQSocketType) throws(ZMQError) {
        let handle = try context.makeRawSocket(type)
        var linger = Int32(ZMQSocket.defaultLinger)
        zmq_setsockopt(handle, ZMQ_LINGER, &linger, MemoryLayout<Int32>.size)
        self.handle = handle
        self.type = type
        self.context = context
        self.message = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
    }

    deinit {
        if let handle {
            var linger: Int32 = -1
            var size = MemoryLayout<Int32>.size
            zmq_getsockopt(handle, ZMQ_LINGER, &linger, &size)
            let bound = Int32(ZMQSocket.defaultLinger)
            if linger < 0 || linger > bound {
                linger = bound
                zmq_setsockopt(handle, ZMQ_LINGER, &linger, MemoryLayout<Int32>.size)
            }
            zmq_close(handle)
        }
        message.deallocate()
    }

    /// Whether ``close()`` has been called.
    package var isClosed: Bool { handle == nil }

    /// Closes the socket using its current linger; later calls do nothing.
    ///
    /// Unsent messages are kept for the linger period (``defaultLinger`` unless changed with
    /// ``ZMQSocketOption/linger``) while the context flushes them in the background.
    package func close() {
        guard let handle else { return }
        self.handle = nil
        zmq_close(handle)
    }

    /// The open libzmq handle, or `ENOTSOCK` naming `function` once the socket is closed.
    @inline(__always)
    func openHandle(_ function: StaticString) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(code: ENOTSOCK, function: String(describing: function)) }
        operations &+= 1
        return handle
    }

    /// Accepts connections on an endpoint such as `tcp://127.0.0.1:*` or `inproc://name`.
    ///
    /// With a wildcard port, read ``ZMQReadOnlySocketOption/lastEndpoint`` to learn the port.
    /// - Throws: ``ZMQError`` from `zmq_bind`: `EADDRINUSE`, `EINVAL` (malformed endpoint),
    ///   `EPROTONOSUPPORT` (unknown transport), `ENOTSOCK` (closed), `ETERM`.
    package func bind(_ endpoint: String) throws(ZMQError) {
        try call("zmq_bind", endpoint, zmq_bind)
    }

    /// Connects to an endpoint; libzmq connects (and reconnects) asynchronously in the background.
    ///
    /// - Throws: ``ZMQError`` from `zmq_connect`: `EINVAL`, `EPROTONOSUPPORT`, `ENOTSOCK`, `ETERM`.
    package func connect(_ endpoint: String) throws(ZMQError) {
        try call("zmq_connect", endpoint, zmq_connect)
    }

    /// Calls `zmq_bind` or `zmq_connect`; a failure names the endpoint, which is what an
    /// operator needs to know first when a node has several.
    private func call(
        _ function: StaticString, _ endpoint: String, _ body: (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Int32
    ) throws(ZMQError) {
        let handle = try openHandle(function)
        do {
            try zmqCall(function) { body(handle, endpoint) }
        } catch {
            throw ZMQError(code: error.code, function: error.function, endpoint: endpoint)
        }
    }

    /// Stops accepting on an endpoint previously bound (use the resolved ``ZMQReadOnlySocketOption/lastEndpoint`` for wildcards).
    ///
    /// - Throws: ``ZMQError`` from `zmq_unbind`: `ENOENT` when the endpoint is not bound.
    package func unbind(_ endpoint: String) throws(ZMQError) {
        let handle = try openHandle("zmq_unbind")
        try zmqCall("zmq_unbind") { zmq_unbind(handle, endpoint) }
    }

    /// Disconnects from an endpoint previously connected.
    ///
    /// - Throws: ``ZMQError`` from `zmq_disconnect`: `ENOENT` when the endpoint is not connected.
    package func disconnect(_ endpoint: String) throws(ZMQError) {
        let handle = try openHandle("zmq_disconnect")
        try zmqCall("zmq_disconnect") { zmq_disconnect(handle, endpoint) }
    }
}

/// Sockets must stay on the thread that owns them; this makes any `Sendable` use a compile error.
@available(*, unavailable, message: "libzmq sockets are not thread-safe; hand data to the owning loop through a Mailbox")
extension ZMQSocket: Sendable {}
