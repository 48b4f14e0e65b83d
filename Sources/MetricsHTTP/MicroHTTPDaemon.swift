import CMicroHTTPD
import Glibc
import Synchronization

/// A running libmicrohttpd daemon on a listening socket of its own, and the context object its
/// callbacks reach: the one place that starts and stops one, for ``MetricsHTTPServer`` and
/// ``RoutingHTTPServer``, which differ only in their threading flags and callbacks.
///
/// Holds the daemon pointer and one retained reference to the context; ``stop()`` (or dropping
/// the daemon) ends the daemon's threads first and only then releases the context, so no
/// callback can reach a released context.
final class MicroHTTPDaemon: Sendable {
    /// Where the daemon listens, with the real port when port 0 was asked for.
    let address: MetricsAddress
    private let running: Mutex<Running?>

    private struct Running {
        let daemon: OpaquePointer
        let context: Unmanaged<AnyObject>
    }

    /// Binds `address` and starts a daemon with `flags`, the bounds of `limits` and `handler`,
    /// whose context pointer is `context` (retained until ``stop()``).
    init(address: MetricsAddress, limits: MetricsHTTPServer.Limits, flags: UInt32,
         handler: MHD_AccessHandlerCallback, context: AnyObject & Sendable) throws(MetricsHTTPError) {
        let (descriptor, bound) = try ListeningSocket.open(address, backlog: Int32(clamping: max(16, limits.connections)))
        let retained = Unmanaged<AnyObject>.passRetained(context)
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .LISTEN_SOCKET, value: Int(descriptor), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: max(1, limits.connections), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: max(1, limits.idleTimeout), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: max(4_096, limits.memoryPerConnection), ptr_value: nil),
            MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
        ]
        guard let daemon = reactorbus_mhd_start(flags, handler, retained.toOpaque(), &options) else {
            retained.release()
            close(descriptor)
            throw .cannotStart(bound)
        }
        self.address = bound
        running = Mutex(Running(daemon: daemon, context: retained))
    }

    /// Closes every connection and the listening socket, waits for the daemon's threads, then
    /// releases the context. Idempotent; not to be called from a callback.
    func stop() {
        guard let stopped = running.withLock({ running -> Running? in
            defer { running = nil }
            return running
        }) else { return }
        MHD_stop_daemon(stopped.daemon)
        stopped.context.release()
    }

    deinit { stop() }

    /// Queues `response` as a whole reply on `connection`, with `extraHeaders` after its own.
    static func queue(_ response: MetricsHTTPResponse, on connection: OpaquePointer, extraHeaders: [(String, String)] = []) -> MHD_Result {
        var body = Array(response.body.utf8)
        guard let reply = body.withUnsafeMutableBytes({ MHD_create_response_from_buffer($0.count, $0.baseAddress, .RESPMEM_MUST_COPY) }) else {
            return .NO
        }
        defer { MHD_destroy_response(reply) }
        _ = MHD_add_response_header(reply, "Content-Type", response.contentType)
        for (name, value) in extraHeaders { _ = MHD_add_response_header(reply, name, value) }
        for (name, value) in response.headers { _ = MHD_add_response_header(reply, name, value) }
        return MHD_queue_response(connection, UInt32(response.status), reply)
    }
}
