/// One request as a ``RoutingHTTPServer`` hands it to its handler: headers read, body never.
public struct HTTPRequest: Sendable, Equatable {
    /// `GET`, `HEAD`, ...
    public var method: String
    /// The path, without the query string (`/api/state`).
    public var path: String

    public init(method: String, path: String) {
        self.method = method
        self.path = path
    }
}
