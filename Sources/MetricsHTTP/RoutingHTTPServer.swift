import CMicroHTTPD
import Synchronization

/// A small HTTP server over libmicrohttpd for pages, JSON and server-sent events: every request
/// goes to one handler, which picks the reply from the method and path.
///
/// Unlike ``MetricsHTTPServer`` (one thread for short answers), each connection gets a thread of
/// its own, so that an event stream can wait for news without holding up other clients. Bounds:
/// at most ``MetricsHTTPServer/Limits/connections`` connections (more are closed at accept, so
/// the threads are bounded too), a connection that makes no progress for
/// ``MetricsHTTPServer/Limits/idleTimeout`` seconds (a client that stops reading an event stream
/// included) is closed, request headers are bounded by
/// ``MetricsHTTPServer/Limits/memoryPerConnection``, and malformed HTTP gets libmicrohttpd's own
/// 400. The handler runs on the connection's thread and must not wait for anything slow.
///
/// libmicrohttpd's daemon pointer and the context its callbacks get stay inside
/// ``MicroHTTPDaemon``, released by ``stop()`` (or when the server is dropped); each event
/// stream's cursor is released by libmicrohttpd's free callback.
public final class RoutingHTTPServer: Sendable {
    /// Where the server listens, with the real port when port 0 was asked for.
    public let address: MetricsAddress
    private let daemon: MicroHTTPDaemon
    private let router: Router

    /// Binds `address`, starts the server and returns.
    ///
    /// - Parameter handle: the reply to a request, called on the connection's thread.
    /// - Throws: ``MetricsHTTPError`` when the port cannot be bound or libmicrohttpd does not start.
    public init(address: MetricsAddress, limits: MetricsHTTPServer.Limits = MetricsHTTPServer.Limits(),
                handle: @escaping @Sendable (HTTPRequest) -> HTTPReply) throws(MetricsHTTPError) {
        let router = Router(handle: handle)
        let flags = UInt32(MHD_USE_THREAD_PER_CONNECTION.rawValue) | UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue)
            | UInt32(MHD_USE_POLL.rawValue)
        daemon = try MicroHTTPDaemon(address: address, limits: limits, flags: flags, handler: routeRequest, context: router)
        self.address = daemon.address
        self.router = router
    }

    /// Ends every event stream, closes every connection and the listening socket, and waits for
    /// the connections' threads (an event stream's `next` returns within about a second).
    /// Idempotent; not to be called from the handler.
    public func stop() {
        router.stopping.store(true, ordering: .relaxed)
        daemon.stop()
    }

    deinit { stop() }
}

/// What the callbacks reach through libmicrohttpd's context pointer.
private final class Router: Sendable {
    let handle: @Sendable (HTTPRequest) -> HTTPReply
    let stopping = Atomic<Bool>(false)

    init(handle: @escaping @Sendable (HTTPRequest) -> HTTPReply) {
        self.handle = handle
    }
}

/// One open event stream: what `next` returned and the client has not taken yet. Used only on
/// its connection's thread (libmicrohttpd calls a response's reader there), so it needs no lock.
private final class EventStreamCursor {
    let next: @Sendable () -> String?
    let router: Router
    var pending: [UInt8] = Array("retry: 1000\n\n".utf8)
    var offset = 0

    init(next: @escaping @Sendable () -> String?, router: Router) {
        self.next = next
        self.router = router
    }
}

/// libmicrohttpd's access handler: answers at its first call (headers read; a body is never read).
private let routeRequest: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, _, _ in
    guard let context, let connection else { return .NO }
    let router = Unmanaged<Router>.fromOpaque(context).takeUnretainedValue()
    let request = HTTPRequest(method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "")
    switch router.handle(request) {
    case .whole(let response):
        return MicroHTTPDaemon.queue(response, on: connection, extraHeaders: [("Cache-Control", "no-store")])
    case .eventStream(let next):
        let cursor = Unmanaged.passRetained(EventStreamCursor(next: next, router: router))
        guard let reply = MHD_create_response_from_callback(UInt64.max, 4_096, readEvents, cursor.toOpaque(), releaseCursor) else {
            cursor.release()
            return .NO
        }
        defer { MHD_destroy_response(reply) }
        _ = MHD_add_response_header(reply, "Content-Type", "text/event-stream; charset=utf-8")
        _ = MHD_add_response_header(reply, "Cache-Control", "no-store")
        return MHD_queue_response(connection, 200, reply)
    }
}

/// Copies the next bytes of an event stream into libmicrohttpd's buffer, asking `next` for more
/// when the pending ones are sent; -1 (end of stream) once the server stops or `next` says so.
private let readEvents: MHD_ContentReaderCallback = { context, _, buffer, capacity in
    guard let context, let buffer, capacity > 0 else { return -2 }
    let cursor = Unmanaged<EventStreamCursor>.fromOpaque(context).takeUnretainedValue()
    if cursor.router.stopping.load(ordering: .relaxed) { return -1 }
    if cursor.offset >= cursor.pending.count {
        guard let text = cursor.next() else { return -1 }
        if cursor.router.stopping.load(ordering: .relaxed) { return -1 }
        cursor.pending = Array((text.isEmpty ? ": idle\n\n" : text).utf8)
        cursor.offset = 0
    }
    let count = min(capacity, cursor.pending.count - cursor.offset)
    cursor.pending.withUnsafeBytes { bytes in
        guard let base = bytes.baseAddress else { return }
        UnsafeMutableRawPointer(buffer).copyMemory(from: base + cursor.offset, byteCount: count)
    }
    cursor.offset += count
    return count
}

/// Drops an event stream's cursor when libmicrohttpd is done with its response.
private let releaseCursor: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<EventStreamCursor>.fromOpaque(context).release()
}
