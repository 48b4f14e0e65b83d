/// What the metrics endpoint answers to a request, decided from its method and path alone.
///
/// `GET /metrics` (and `HEAD`) get the exposition; any other method on it is refused with 405
/// and an `Allow` header; any other path is 404. Bodies are never read.
public struct MetricsHTTPResponse: Sendable, Equatable {
    /// The one path served.
    public static let path = "/metrics"

    public var status: Int
    public var contentType: String
    public var body: String
    /// Headers beyond `Content-Type` (`Allow` on a 405).
    public var headers: [String: String]

    public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: String, headers: [String: String] = [:]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// The response to `method` on `path`; `metrics` renders the exposition, only when asked.
    public static func to(method: String, path: String, metrics: () -> (contentType: String, body: String)) -> MetricsHTTPResponse {
        guard path == Self.path else {
            return MetricsHTTPResponse(status: 404, body: "not found: the metrics are at \(Self.path)\n")
        }
        guard method == "GET" || method == "HEAD" else {
            return MetricsHTTPResponse(status: 405, body: "method not allowed: use GET\n", headers: ["Allow": "GET, HEAD"])
        }
        let (contentType, body) = metrics()
        return MetricsHTTPResponse(status: 200, contentType: contentType, body: body)
    }
}
