import Glibc
import MetricsHTTP
import Synchronization
import TestSupport
import Testing

/// The router over real loopback sockets: whole replies by path, event streams that stay open,
/// a stalled stream that does not hold up other clients, and a stop that ends every stream.
@Suite struct RoutingHTTPServerTests {
    final class Events: Sendable {
        let next = Atomic<Int>(0)
    }

    func server(_ events: Events) throws -> RoutingHTTPServer {
        try RoutingHTTPServer(address: MetricsAddress(host: "127.0.0.1", port: 0)) { request in
            switch request.path {
            case "/events":
                return .eventStream {
                    let number = events.next.add(1, ordering: .relaxed).newValue
                    if number > 3 {
                        usleep(100_000)
                        return ""
                    }
                    return "event: tick\ndata: \(number)\n\n"
                }
            case "/hello":
                return .whole(MetricsHTTPResponse(status: 200, contentType: "application/json", body: #"{"method":"\#(request.method)"}"#))
            default:
                return .whole(MetricsHTTPResponse(status: 404, body: "no \(request.path)\n"))
            }
        }
    }

    @Test func wholeRepliesGoByPathAndEventStreamsStayOpenUntilTheServerStops() throws {
        let events = Events()
        let server = try server(events)
        let port = server.address.port
        let hello = try #require(RawHTTPClient.exchange(port: port, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        #expect(hello.status == 200)
        #expect(hello.body == #"{"method":"GET"}"#)
        #expect(hello.headers["cache-control"] == "no-store")
        #expect(RawHTTPClient.exchange(port: port, "GET /other?x=1 HTTP/1.0\r\n\r\n")?.body == "no /other\n")

        // A stream nobody reads does not hold up the others.
        let stalled = try #require(RawHTTPClient(port: port))
        stalled.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        let stream = try #require(RawHTTPClient(port: port))
        stream.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        let read = stream.read(withinMilliseconds: 10_000) { $0.contains(": idle\n\n") }
        #expect(read.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(read)")
        #expect(read.contains("Content-Type: text/event-stream; charset=utf-8\r\n"))
        #expect(read.contains("retry: 1000\n\n"))
        #expect(read.contains(": idle\n\n"), "nothing new is sent as a comment line: \(read)")
        #expect(RawHTTPClient.exchange(port: port, "GET /hello HTTP/1.0\r\n\r\n")?.status == 200)

        // Stopping ends the open streams and closes the port, within about the stream's wait.
        let start = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - start < .seconds(3))
        #expect(stream.readUntilClosed(timeoutMilliseconds: 3_000) != nil, "the stream was closed")
        #expect(RawHTTPClient(port: port) == nil)
        withExtendedLifetime(stalled) {}
    }
}
