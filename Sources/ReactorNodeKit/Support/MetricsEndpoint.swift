import ArgumentParsing
import Glibc
import MetricsHTTP
import ReactorLog
import ReactorMetrics

/// `--metrics HOST:PORT`: the Prometheus endpoint of `authority`, `worker` and `run`.
///
/// Off unless given. The server answers on a thread of its own; rendering reads the nodes'
/// metrics as their loops last published them and never waits for a loop.
enum MetricsEndpoint {
    static let option = Option.value(
        "metrics", "HOST:PORT",
        help: "serve Prometheus metrics at http://HOST:PORT/metrics, e.g. 127.0.0.1:9464 (0.0.0.0 for every interface, port 0 for any free one); off when not given")

    /// The address `--metrics` asks for, or `nil` when it is not given.
    static func address(_ arguments: ParsedArguments) throws(CLIError) -> MetricsAddress? {
        guard let text = arguments.string("metrics") else { return nil }
        do {
            return try MetricsAddress(parsing: text)
        } catch {
            throw .usage("\(arguments.command): --metrics \(error)")
        }
    }

    /// Starts serving the families `families` returns at `address`; `nil` without an address.
    ///
    /// - Throws: exit 69 when the port is taken or not this host's, 1 when the server does not start.
    static func start(_ address: MetricsAddress?, command: String, logger: Logger,
                      families: @escaping @Sendable () -> [MetricFamily]) throws(CLIError) -> MetricsHTTPServer? {
        guard let address else { return nil }
        do {
            let server = try MetricsHTTPServer(address: address) { PrometheusExposition.text(families()) }
            logger.info("metrics at http://\(server.address)\(MetricsHTTPResponse.path)")
            return server
        } catch {
            if case .cannotListen(_, _, let code) = error, code == EADDRINUSE || code == EADDRNOTAVAIL {
                throw .unavailable("\(command): cannot serve metrics: \(error); stop whatever holds that port or choose another --metrics")
            }
            throw .failed("\(command): cannot serve metrics: \(error)")
        }
    }

    /// The labels every series of one node carries.
    static func labels(app: String, node: String) -> MetricLabels {
        ["app": app, "node": node]
    }
}
