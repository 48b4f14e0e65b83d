import MetricsHTTP
import ReactorBus
import ReactorLog

/// Data to stdout and messages to stderr, one whole line per `write(2)`: nothing waits in a
/// buffer, so pipes and container logs see every line as it is written.
enum Output {
    /// Writes one line of data to stdout.
    static func line(_ text: String) { StandardStream.write(text + "\n", to: 1) }

    /// The line an authority prints once bound: its real endpoints as one JSON object, with
    /// its replication endpoint and metrics address (`HOST:PORT`) when it serves them; a standby
    /// prints `{"standby_of":EP}` instead, and the endpoints line once promoted.
    static func endpoints<R>(_ endpoints: AuthorityNode<R>.Endpoints, metrics: MetricsAddress? = nil) {
        let served = metrics.map { #","metrics":"\#($0)""# } ?? ""
        if let primary = endpoints.standbyOf {
            line(#"{"standby_of":"\#(primary)"\#(served)}"#)
            return
        }
        let replication = endpoints.replication.map { #","replication":"\#($0)""# } ?? ""
        line(#"{"actions":"\#(endpoints.actions)","workers":"\#(endpoints.workers)","feed":"\#(endpoints.feed)"\#(replication)\#(served)}"#)
    }

    /// Writes one line to stderr (usage and fatal errors; events go through the logger).
    static func error(_ text: String) { StandardStream.write(text + "\n", to: 2) }
}
