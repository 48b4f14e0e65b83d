import Glibc
import TestSupport
import MetricsHTTP
import ReactorMetrics
import Synchronization
import Testing

/// The server over real loopback sockets, on ports the kernel picks (port 0).
@Suite struct MetricsHTTPServerTests {
    static let exposition = "# HELP x An example.\n# TYPE x counter\nx_total 1\n"

    // Atomic is not copyable: hand the test a reference to it.
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    func counted(_ limits: MetricsHTTPServer.Limits = .init()) throws -> (MetricsHTTPServer, Counter) {
        let renders = Counter()
        let server = try MetricsHTTPServer(address: MetricsAddress(host: "127.0.0.1", port: 0), limits: limits) {
            renders.value.add(1, ordering: .relaxed)
            return Self.exposition
        }
        return (server, renders)
    }

    @Test func getMetricsAnswersTheExpositionWithItsContentType() throws {
        let (server, renders) = try counted()
        defer { server.stop() }
        #expect(server.address.port != 0)
        let answer = try #require(RawHTTPClient.exchange(port: server.address.port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        #expect(answer.status == 200, "\(answer.raw)")
        #expect(answer.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(answer.body == Self.exposition)
        #expect(renders.value.load(ordering: .relaxed) == 1)
    }

    @Test func unknownPathsAre404AndOtherMethods405WithoutRendering() throws {
        let (server, renders) = try counted()
        defer { server.stop() }
        let port = server.address.port
        let missing = try #require(RawHTTPClient.exchange(port: port, "GET /metricsx HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        #expect(missing.status == 404)
        let root = try #require(RawHTTPClient.exchange(port: port, "GET / HTTP/1.0\r\n\r\n"))
        #expect(root.status == 404)
        let post = try #require(RawHTTPClient.exchange(port: port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"))
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD")
        let delete = try #require(RawHTTPClient.exchange(port: port, "DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        #expect(delete.status == 405)
        #expect(renders.value.load(ordering: .relaxed) == 0)
        let head = try #require(RawHTTPClient.exchange(port: port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        #expect(head.status == 200)
        #expect(head.body == "")
    }

    @Test func malformedRequestsGet400AndTheServerKeepsServing() throws {
        let (server, _) = try counted()
        defer { server.stop() }
        let port = server.address.port
        for garbage in ["HELLO\r\n\r\n", "GET\r\n\r\n", "GET /metrics HTTP/9.9\r\n\r\n", "\u{1}\u{2}\u{3} / HTTP/1.1\r\n\r\n"] {
            // Answered with an error status, or closed without a word: never a 200, never kept open.
            let answer = try #require(RawHTTPClient.exchange(port: port, garbage), "\(garbage.debugDescription) was left open")
            if let status = answer.status {
                #expect((400...505).contains(status), "\(garbage.debugDescription): \(answer.raw.debugDescription)")
            } else {
                #expect(answer.raw == "", "\(garbage.debugDescription): \(answer.raw.debugDescription)")
            }
        }
        let huge = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Filler: " + String(repeating: "a", count: 64 << 10) + "\r\n\r\n"
        let refused = try #require(RawHTTPClient.exchange(port: port, huge))
        #expect(refused.status.map { $0 >= 400 } ?? true, "\(refused.raw.prefix(200))")
        let answer = try #require(RawHTTPClient.exchange(port: port, "GET /metrics HTTP/1.0\r\n\r\n"))
        #expect(answer.status == 200)
        #expect(answer.body == Self.exposition)
    }

    @Test func aSilentClientIsDroppedAfterTheIdleTimeoutAndDoesNotDelayOthers() throws {
        var limits = MetricsHTTPServer.Limits()
        limits.idleTimeout = 1
        let (server, _) = try counted(limits)
        defer { server.stop() }
        let silent = try #require(RawHTTPClient(port: server.address.port))
        // Meanwhile another client is answered at once.
        let start = RawHTTPClient.now()
        let answer = try #require(RawHTTPClient.exchange(port: server.address.port, "GET /metrics HTTP/1.0\r\n\r\n", timeoutMilliseconds: 900))
        #expect(answer.status == 200)
        #expect(RawHTTPClient.now() - start < 900)
        // The silent one is closed by the server, with nothing sent, within the timeout and a margin.
        #expect(silent.readUntilClosed(timeoutMilliseconds: 5_000) == "")
    }

    @Test func connectionsBeyondTheLimitWaitUntilASlotFrees() throws {
        var limits = MetricsHTTPServer.Limits()
        limits.connections = 2
        limits.idleTimeout = 1
        let (server, _) = try counted(limits)
        defer { server.stop() }
        let port = server.address.port
        let holders = [try #require(RawHTTPClient(port: port)), try #require(RawHTTPClient(port: port))]
        // A third waits in the listening socket's backlog, unanswered, while both slots are held ...
        let third = try #require(RawHTTPClient(port: port))
        third.send("GET /metrics HTTP/1.0\r\n\r\n")
        #expect(third.readUntilClosed(timeoutMilliseconds: 400) == nil)
        // ... until the silent holders time out and are closed; then it is answered.
        for holder in holders { #expect(holder.readUntilClosed(timeoutMilliseconds: 5_000) == "") }
        let answer = try #require(third.readUntilClosed(timeoutMilliseconds: 5_000).map(HTTPAnswer.init))
        #expect(answer.status == 200)
        #expect(answer.body == Self.exposition)
    }

    @Test func aPortInUseIsReportedAndStopFreesIt() throws {
        let (server, _) = try counted()
        let address = server.address
        #expect(throws: MetricsHTTPError.cannotListen(address, call: "bind", code: EADDRINUSE)) {
            _ = try MetricsHTTPServer(address: address) { "" }
        }
        server.stop()
        server.stop()
        #expect(RawHTTPClient(port: address.port) == nil)
        let again = try MetricsHTTPServer(address: address) { Self.exposition }
        defer { again.stop() }
        #expect(RawHTTPClient.exchange(port: address.port, "GET /metrics HTTP/1.0\r\n\r\n")?.body == Self.exposition)
    }

    @Test func addressesAreParsedOrRefusedWithAReason() throws {
        #expect(try MetricsAddress(parsing: "127.0.0.1:9464") == MetricsAddress(host: "127.0.0.1", port: 9464))
        #expect(try MetricsAddress(parsing: "*:0") == MetricsAddress(host: "0.0.0.0", port: 0))
        #expect(try MetricsAddress(parsing: "localhost:80") == MetricsAddress(host: "127.0.0.1", port: 80))
        #expect(try MetricsAddress(parsing: "0.0.0.0:9464").description == "0.0.0.0:9464")
        for (text, why) in [("9464", "expected HOST:PORT"), ("127.0.0.1:http", "'http' is not a port (0 to 65535)"),
                            ("127.0.0.1:70000", "'70000' is not a port (0 to 65535)"),
                            ("example.org:9464", "'example.org' is not an IPv4 address (or localhost, or * for every interface)"),
                            ("::1:9464", "'::1' is not an IPv4 address (or localhost, or * for every interface)")] {
            #expect(throws: MetricsHTTPError.badAddress(text, why)) { try MetricsAddress(parsing: text) }
        }
        #expect(MetricsHTTPError.badAddress("9464", "expected HOST:PORT").description == "'9464': expected HOST:PORT, e.g. 127.0.0.1:9464")
    }

    @Test func responsesAreDecidedByMethodAndPath() {
        var rendered = 0
        let render = { () -> (contentType: String, body: String) in
            rendered += 1
            return ("text/x", "body")
        }
        #expect(MetricsHTTPResponse.to(method: "GET", path: "/metrics", metrics: render) == MetricsHTTPResponse(status: 200, contentType: "text/x", body: "body"))
        #expect(MetricsHTTPResponse.to(method: "PUT", path: "/metrics", metrics: render).status == 405)
        #expect(MetricsHTTPResponse.to(method: "GET", path: "/metrics/", metrics: render).status == 404)
        #expect(MetricsHTTPResponse.to(method: "POST", path: "/nope", metrics: render).status == 404)
        #expect(rendered == 1)
    }
}
