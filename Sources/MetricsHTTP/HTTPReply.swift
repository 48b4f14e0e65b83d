/// What a ``RoutingHTTPServer`` answers to one request: a whole response, or a server-sent
/// event stream (`text/event-stream`) that stays open.
public enum HTTPReply: Sendable {
    /// A complete response (status, content type, body, extra headers).
    case whole(MetricsHTTPResponse)
    /// An event stream: the server calls `next` on the connection's own thread each time the
    /// client has taken what was sent; `next` waits at most about a second and returns the text
    /// to send (complete `event:`/`data:` blocks), `""` when there is nothing new (the server then
    /// sends a comment line, so a dead client is noticed), or `nil` to end the stream.
    case eventStream(next: @Sendable () -> String?)
}
