import CMicroHTTPD
import ReactorMetrics
import Synchronization

/// A small HTTP server for `GET /metrics`, on a thread of libmicrohttpd's own.
///
/// Made for scrapers, not for the open internet, yet safe against clients that misbehave: at
/// most ``Limits/connections`` connections at once (more are refused at accept), a connection
/// idle for ``Limits/idleTimeout`` is closed (a client that connects and sends nothing cannot
/// hold a slot for longer), a request whose headers exceed ``Limits/memoryPerConnection`` is
/// refused by libmicrohttpd, and malformed HTTP gets libmicrohttpd's own 400. Every request is
/// answered on the server's one thread with ``MetricsHTTPResponse``; `render` is called for
/// `GET /metrics` only, on that thread, so it must not wait for anything slow: read a
/// published snapshot of counters and format it.
///
/// libmicrohttpd's pointers stay inside ``MicroHTTPDaemon`` (the daemon and the context its
/// callback gets, both released by ``stop()`` or when the server is dropped).
public final class MetricsHTTPServer: Sendable {
    /// Bounds on what clients can take from the server.
    public struct Limits: Sendable {
        /// Connections open at once; more are closed as soon as they are accepted.
        public var connections: Int = 32
        /// Whole seconds a connection may stay idle (sending nothing, reading nothing).
        public var idleTimeout: Int = 5
        /// Bytes libmicrohttpd may use per connection, request headers included.
        public var memoryPerConnection: Int = 32 << 10

        /// The defaults above.
        public init() {}
    }

    /// Where the server listens, with the real port when port 0 was asked for.
    public let address: MetricsAddress
    private let daemon: MicroHTTPDaemon

    /// Binds `address`, starts the server thread and returns.
    ///
    /// - Parameter render: the exposition for `GET /metrics`, called on the server's thread.
    /// - Throws: ``MetricsHTTPError`` when the port cannot be bound (in use, not an address of
    ///   this host) or libmicrohttpd does not start.
    public init(address: MetricsAddress, limits: Limits = Limits(), render: @escaping @Sendable () -> String) throws(MetricsHTTPError) {
        daemon = try MicroHTTPDaemon(address: address, limits: limits, flags: UInt32(MHD_USE_AUTO_INTERNAL_THREAD.rawValue),
                                     handler: handleRequest, context: Responder(render: render))
        self.address = daemon.address
    }

    /// Closes every connection and the listening socket and ends the server's thread, waiting
    /// for a request being answered. Idempotent; not to be called from `render`.
    public func stop() { daemon.stop() }
}

/// What the callback reaches through libmicrohttpd's context pointer.
private final class Responder: Sendable {
    let render: @Sendable () -> String

    init(render: @escaping @Sendable () -> String) {
        self.render = render
    }
}

/// libmicrohttpd's access handler: answers every request at its first call (headers read; a
/// body, if any, is never read, and libmicrohttpd closes such a connection after the answer).
private let handleRequest: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, _, _ in
    guard let context, let connection else { return .NO }
    let responder = Unmanaged<Responder>.fromOpaque(context).takeUnretainedValue()
    let response = MetricsHTTPResponse.to(method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "") {
        (PrometheusExposition.contentType, responder.render())
    }
    return MicroHTTPDaemon.queue(response, on: connection)
}
