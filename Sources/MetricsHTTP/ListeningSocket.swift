import Glibc

/// A TCP socket bound to a ``MetricsAddress`` and listening, handed to libmicrohttpd.
///
/// Bound here rather than by libmicrohttpd so a port in use is reported with its `errno`, and a
/// port 0 can be read back as the real one.
enum ListeningSocket {
    /// Opens, binds and listens; returns the descriptor and the address as bound.
    static func open(_ address: MetricsAddress, backlog: Int32) throws(MetricsHTTPError) -> (descriptor: Int32, bound: MetricsAddress) {
        guard let host = MetricsAddress.ipv4(address.host) else {
            throw .badAddress(address.description, "'\(address.host)' is not an IPv4 address")
        }
        // Non-blocking: the server's one thread must never wait in accept for a peer that left.
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw .cannotListen(address, call: "socket", code: errno) }
        func fail(_ call: String) -> MetricsHTTPError {
            let code = errno
            close(descriptor)
            return .cannotListen(address, call: call, code: code)
        }
        var on: Int32 = 1
        guard setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else { throw fail("setsockopt") }
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = address.port.bigEndian
        socketAddress.sin_addr = host
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw fail("bind") }
        guard listen(descriptor, backlog) == 0 else { throw fail("listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw fail("getsockname") }
        return (descriptor, MetricsAddress(host: address.host, port: UInt16(bigEndian: socketAddress.sin_port)))
    }
}
