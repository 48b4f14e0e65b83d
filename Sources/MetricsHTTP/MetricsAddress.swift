import Glibc

/// Where a metrics endpoint listens: an IPv4 address and a TCP port (`127.0.0.1:9464`).
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
    /// The IPv4 address in dotted form; `0.0.0.0` listens on every interface.
    public var host: String
    /// The TCP port; 0 asks for any free one (the server's ``MetricsHTTPServer/address`` has
    /// the real one).
    public var port: UInt16

    /// An address from its parts (the host is checked when the server binds).
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Reads `HOST:PORT`: an IPv4 address, `localhost` (127.0.0.1) or `*` (every interface),
    /// and a port from 0 to 65535.
    ///
    /// - Throws: ``MetricsHTTPError/badAddress(_:_:)`` saying what is wrong.
    public init(parsing text: String) throws(MetricsHTTPError) {
        guard let colon = text.lastIndex(of: ":") else { throw .badAddress(text, "expected HOST:PORT") }
        let rawHost = String(text[..<colon])
        let rawPort = String(text[text.index(after: colon)...])
        guard let port = UInt16(rawPort) else { throw .badAddress(text, "'\(rawPort)' is not a port (0 to 65535)") }
        let host = switch rawHost {
        case "*": "0.0.0.0"
        case "localhost": "127.0.0.1"
        default: rawHost
        }
        guard Self.ipv4(host) != nil else { throw .badAddress(text, "'\(rawHost)' is not an IPv4 address (or localhost, or * for every interface)") }
        self.init(host: host, port: port)
    }

    public var description: String { "\(host):\(port)" }

    /// The address in network byte order, or `nil` if `host` is not a dotted IPv4 address.
    static func ipv4(_ host: String) -> in_addr? {
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) == 1 ? address : nil
    }
}
