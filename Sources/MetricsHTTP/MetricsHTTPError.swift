import Glibc

/// Why a metrics endpoint could not be set up.
public enum MetricsHTTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text given is not a `HOST:PORT` this server can listen on.
    case badAddress(String, String)
    /// The listening socket could not be made, bound or put to listen (an `errno`:
    /// `EADDRINUSE` when something else holds the port).
    case cannotListen(MetricsAddress, call: String, code: Int32)
    /// libmicrohttpd refused to start its daemon on the socket.
    case cannotStart(MetricsAddress)

    public var description: String {
        switch self {
        case .badAddress(let text, let why):
            "'\(text)': \(why), e.g. 127.0.0.1:9464"
        case .cannotListen(let address, let call, let code):
            "cannot listen on \(address): \(call): \(String(cString: strerror(code)))"
        case .cannotStart(let address):
            "cannot start the HTTP server on \(address)"
        }
    }
}
