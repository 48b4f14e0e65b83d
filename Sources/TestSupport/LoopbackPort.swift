import Glibc

/// Free TCP ports on 127.0.0.1, for servers that must be told their port up front (etcd's
/// peer and client URLs) rather than binding port 0 themselves.
package enum LoopbackPort {
    /// `count` distinct ports that were free a moment ago: each is bound to port 0 (the kernel
    /// picks), read back and released. Another process may take one before the caller binds it,
    /// so a caller retries with new ports when its server cannot bind.
    package static func free(_ count: Int = 1) throws -> [UInt16] {
        var descriptors: [Int32] = []
        defer { for descriptor in descriptors { close(descriptor) } }
        var ports: [UInt16] = []
        for _ in 0..<count {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw ChildProcessError("socket: \(String(cString: strerror(errno)))") }
            descriptors.append(descriptor)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
                }
            }
            guard bound else { throw ChildProcessError("bind 127.0.0.1:0: \(String(cString: strerror(errno)))") }
            ports.append(UInt16(bigEndian: address.sin_port))
        }
        return ports
    }
}
