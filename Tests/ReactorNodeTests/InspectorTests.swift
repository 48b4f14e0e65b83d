import Foundation
import Testing
import TestSupport
import TestTraits

/// `reactor-node inspect` on a real cluster: its JSON endpoints exactly, misbehaving HTTP clients,
/// and the page itself in a real headless browser (Chromium driven by Selenium).
@Suite(.spawnsProcesses) struct InspectorTests {
    static let countUp = #"{"countUp":{}}"#
    static let countUpAsync = #"{"countUpAsync":{}}"#

    /// Whether Debian's chromium, chromium-driver and python3-selenium are there
    /// (scripts/ensure-deps.sh --browser, which `make test` runs): actually tried, so the test is
    /// skipped only when the browser could not run at all.
    static let browserInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        && Python.imports("selenium.webdriver", interpreter: "/usr/bin/python3")

    /// An authority with a data directory and a worker, holding a known history: `countUp` ×4
    /// (actions 1–4, versions 1–4), `countUpAsync` twice, each waited for (actions 5 and 6, whose
    /// jobs made versions 5 and 6), `countUp` ×2 (actions 7 and 8, versions 7 and 8).
    func knownHistory() async throws -> (cluster: ClusterProcesses, data: String) {
        let data = NSTemporaryDirectory() + "reactorbus-inspect-\(UUID().uuidString)"
        let cluster = try await ClusterProcesses(extra: ["--data", data])
        try cluster.addWorker()
        try await cluster.waitForWorkers(1)
        try await send(cluster, Self.countUp, count: 4, thenApplied: 4)
        try await send(cluster, Self.countUpAsync, count: 1, thenApplied: 5)
        try await send(cluster, Self.countUpAsync, count: 1, thenApplied: 6)
        try await send(cluster, Self.countUp, count: 2, thenApplied: 8)
        return (cluster, data)
    }

    /// Sends `count` copies of `action` one at a time and waits until `applied` actions are applied.
    func send(_ cluster: ClusterProcesses, _ action: String, count: Int, thenApplied applied: UInt64) async throws {
        let sent = try await cluster.send([action], repeat: count, concurrency: 1)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        let stats = try await WireProbe(actions: cluster.endpoints.actions).stats(within: .seconds(30)) { $0["actions_applied"] == applied }
        #expect(stats["actions_applied"] == applied, "\(stats)")
    }

    /// Starts `inspect` on the cluster (any free port) and returns it with its URL and port.
    func inspector(_ cluster: ClusterProcesses?, data: String?, app: String = "counter", extra: [String] = []) async throws -> (process: ChildProcess, url: String, port: UInt16) {
        var arguments = ["inspect", "--app", app, "--listen", "127.0.0.1:0", "--stats-interval", "0.2"]
        if let cluster { arguments += ["--feed", cluster.endpoints.feed, "--actions", cluster.endpoints.actions] }
        if let data { arguments += ["--data", data] }
        let process = try ChildProcess.node(arguments + extra, name: "inspect")
        let line = try #require(await process.waitForLine { $0.contains("\"inspect\"") }, "inspect printed no address\(process.diagnostics)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        let url = try #require(object["inspect"])
        let port = try #require(url.split(separator: ":").last.flatMap { UInt16($0.trimmingCharacters(in: CharacterSet(charactersIn: "/"))) })
        return (process, url, port)
    }

    /// `GET path`, answered within 10 s.
    func get(_ port: UInt16, _ path: String) -> HTTPAnswer? {
        RawHTTPClient.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeoutMilliseconds: 10_000)
    }

    /// Polls `path` until its body is `body` (or the deadline); returns the last answer's body.
    func poll(_ port: UInt16, _ path: String, body: String, within timeout: Duration = .seconds(30)) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        var last: String?
        while ContinuousClock.now < deadline {
            last = get(port, path)?.body
            if last == body { return last }
            try await Task.sleep(for: .milliseconds(100))
        }
        return last
    }

    /// A body with the inspector's own clock readings (`seen_at_ms`, `seen_after_ms`) masked.
    static func masked(_ body: String) -> String {
        body.replacing(/"(seen_at_ms|seen_after_ms|duration_ms)":[0-9.e+-]+/) { #""\#($0.output.1)":T"# }
    }

    /// The job (if any) of one action as `/api/actions/SEQ` shows it, once `ready` holds for it.
    func job(_ port: UInt16, action seq: Int, within timeout: Duration = .seconds(30), until ready: ([String: Any]) -> Bool) async throws -> [String: Any]? {
        let deadline = ContinuousClock.now + timeout
        var last: [String: Any]?
        while ContinuousClock.now < deadline {
            if let body = get(port, "/api/actions/\(seq)")?.body,
               let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
               let first = (object["jobs"] as? [[String: Any]])?.first {
                last = first
                if ready(first) { return first }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return last
    }

    @Test func jobsShowTheirWorkerDispatchesAttemptsAndDurationFromTheAuthority() async throws {
        let cluster = try await ClusterProcesses(app: "primes")
        try cluster.addWorker(["--name", "w-one", "--attempts", "2"])
        try await cluster.waitForWorkers(1)
        let (inspect, _, port) = try await inspector(cluster, data: nil, app: "primes")
        // The authority makes job events once the inspector's subscription reached it: wait
        // until it counts the inspector's feed connection.
        var observers: UInt64 = 0
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline, observers < 1 {
            observers = try await cluster.stats()["observers"] ?? 0
            if observers < 1 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(observers == 1)
        let sent = try await cluster.send([#"{"factor":{"n":12}}"#, #"{"factor":{"n":0}}"#], repeat: 1, concurrency: 1)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        let done = try #require(try await job(port, action: 1) { $0["outcome"] as? String == "done" }, "\(inspect.diagnostics)")
        #expect(done["outcome"] as? String == "done", "\(done)")
        #expect(done["worker"] as? String == "w-one")
        #expect(done["dispatches"] as? Int == 1)
        #expect(done["attempts"] is NSNull)
        #expect((done["duration_ms"] as? Double ?? -1) > 0)
        let failed = try #require(try await job(port, action: 2) { $0["outcome"] as? String == "failed" }, "\(inspect.diagnostics)")
        #expect(failed["outcome"] as? String == "failed", "\(failed)")
        #expect(failed["worker"] as? String == "w-one")
        #expect(failed["dispatches"] as? Int == 1)
        #expect(failed["attempts"] as? Int == 2)
        #expect((failed["duration_ms"] as? Double ?? -1) > 0)
        inspect.signal(SIGTERM)
        #expect(await inspect.waitForExit(timeout: .seconds(10)) == 0, "\(inspect.diagnostics)")
        await cluster.stop()
    }

    @Test func theJSONEndpointsAnswerExactlyFromMemoryAndFromTheJournal() async throws {
        let (cluster, data) = try await knownHistory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        // A window of 2 versions: older ones come from the data directory.
        let (inspect, _, port) = try await inspector(cluster, data: data, extra: ["--keep-versions", "2", "--checkpoint-every", "1"])

        let live = try await poll(port, "/api/state", body: #"{"action_seq":8,"state":{"count":8},"version":8}"# + "\n")
        #expect(live == #"{"action_seq":8,"state":{"count":8},"version":8}"# + "\n", "\(inspect.diagnostics)")
        #expect(get(port, "/api/state/7")?.body == #"{"action_seq":7,"source":"memory","state":{"count":7},"version":7}"# + "\n")
        #expect(get(port, "/api/state/2")?.body == #"{"action_seq":2,"source":"journal","state":{"count":2},"version":2}"# + "\n")
        #expect(get(port, "/api/state/0")?.body == #"{"action_seq":0,"source":"journal","state":{"count":0},"version":0}"# + "\n")
        let tooNew = get(port, "/api/state/9")
        #expect(tooNew?.status == 404)
        #expect(tooNew?.body == #"{"error":"version 9: version 9 is past the journal's end (version 8)"}"# + "\n")
        #expect(get(port, "/api/state/nine")?.status == 400)

        // Action 5: no sync mutation, one job whose mutation made version 5; the state before it
        // (version 4) is outside the window, so it is replayed from the journal.
        let action = try #require(get(port, "/api/actions/5"))
        #expect(action.status == 200)
        #expect(action.headers["content-type"] == "application/json")
        #expect(Self.masked(action.body) == #"""
            {"action":{"countUpAsync":{}},"action_seq":5,"after":{"state":{"count":5}},"before":{"state":{"count":4},"version":4},"complete":true,\#
            "diff":[{"after":5,"before":4,"path":"count"}],"jobs":[{"attempts":null,"dispatches":null,"duration_ms":null,"effect_index":0,"job":"5.0","mutations":\#
            [{"index":0,"mutation":{"increase":{}},"origin":"async","version":5}],"outcome":"done","seen_after_ms":T,"worker":null}],\#
            "mutations":[],"seen_at_ms":T}
            """# + "\n", "\(action.body)")
        let actions = try #require(get(port, "/api/actions")?.body)
        let log = try #require(try JSONSerialization.jsonObject(with: Data(actions.utf8)) as? [[String: Any]])
        #expect(log.compactMap { $0["action_seq"] as? Int } == [8, 7, 6, 5, 4, 3, 2, 1])
        #expect(get(port, "/api/actions/99")?.status == 404)

        // The summary's gauges come from the stats polls: the authority counts the inspector's
        // feed connection once its socket monitor reports it, so wait for a poll that has it.
        var facts: [String: Any] = [:]
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let summary = try #require(get(port, "/api/summary")?.body)
            facts = try #require(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
            if facts["observers"] as? Int == 1 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(facts["version"] as? Int == 8)
        #expect(facts["workers"] as? Int == 1)
        #expect(facts["observers"] as? Int == 1, "the inspector's own feed subscription")
        #expect(facts["data"] as? String == data)

        // Unknown paths, other methods, malformed HTTP.
        let unknown = try #require(get(port, "/admin"))
        #expect(unknown.status == 404)
        #expect(unknown.body.contains("not found: /admin"))
        let post = RawHTTPClient.exchange(port: port, "POST /api/state HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        #expect(post?.status == 405)
        #expect(post?.headers["allow"] == "GET, HEAD")
        // No request line: libmicrohttpd closes the connection without an answer, at once.
        #expect(RawHTTPClient.exchange(port: port, "HELLO\r\n\r\n")?.raw == "")
        #expect(RawHTTPClient.exchange(port: port, "GET / HTTP/9.9\r\nHost: x\r\n\r\n")?.status == 505)
        // The page itself, from the binary.
        let page = try #require(get(port, "/"))
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body.contains("<title>ReactorBus inspector</title>"))
        for reference in ["src=", "<link", "@import", "url(", "//cdn"] {
            #expect(!page.body.contains(reference), "the page loads nothing from elsewhere: \(reference)")
        }

        // With the data directory alone, the journal is the source: the same state and log.
        let (journalOnly, _, journalPort) = try await inspector(nil, data: data)
        #expect(try await poll(journalPort, "/api/state", body: #"{"action_seq":8,"state":{"count":8},"version":8}"# + "\n") != nil)
        #expect(get(journalPort, "/api/state/3")?.body == #"{"action_seq":3,"source":"memory","state":{"count":3},"version":3}"# + "\n")
        #expect(Self.masked(get(journalPort, "/api/actions/5")?.body ?? "") == Self.masked(action.body))

        for process in [inspect, journalOnly] {
            process.signal(SIGTERM)
            #expect(await process.waitForExit(timeout: .seconds(10)) == 0, "\(process.diagnostics)")
        }
        // It never changed the cluster: every action and ack is the test's own.
        let stats = try await cluster.stats()
        #expect(stats["actions_accepted"] == 8)
        #expect(stats["version"] == 8)
        await cluster.stop()
        #expect(cluster.authority.reap() == 0, "\(cluster.authority.diagnostics)")
    }

    @Test func misbehavingHTTPClientsOnTheInspectorPortDoNotDisturbTheCluster() async throws {
        let (cluster, data) = try await knownHistory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let (inspect, _, port) = try await inspector(cluster, data: nil)
        #expect(try await poll(port, "/api/state", body: #"{"action_seq":8,"state":{"count":8},"version":8}"# + "\n") != nil)

        // Event streams that are never read, silent connections beyond the limit (64), garbage,
        // half a request and oversized headers.
        let streams = (0..<4).compactMap { _ -> RawHTTPClient? in
            let client = RawHTTPClient(port: port)
            client?.send("GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n")
            return client
        }
        let silent = (0..<70).compactMap { _ in RawHTTPClient(port: port) }
        let rude = ["HELLO\r\n\r\n", "GET /api/state HTTP/1.1\r\nHost: x\r\nX-Half: ",
                    "GET /api/state HTTP/1.1\r\nX-Big: " + String(repeating: "z", count: 100_000) + "\r\n\r\n"].compactMap { request -> RawHTTPClient? in
            let client = RawHTTPClient(port: port)
            client?.send(request)
            return client
        }
        #expect(streams.count == 4 && silent.count == 70 && rude.count == 3)

        // The authority keeps acking at once.
        let start = ContinuousClock.now
        let sent = try await cluster.send([Self.countUp], repeat: 300)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        #expect(ContinuousClock.now - start < .seconds(20))
        let stats = try await cluster.stats()
        #expect(stats["acks"] == 308)
        #expect(stats["version"] == 308)

        // Once the silent ones time out (5 s idle), the inspector answers with the new state.
        let caughtUp = try await poll(port, "/api/state", body: #"{"action_seq":308,"state":{"count":308},"version":308}"# + "\n", within: .seconds(40))
        #expect(caughtUp == #"{"action_seq":308,"state":{"count":308},"version":308}"# + "\n", "\(inspect.diagnostics)")
        // A stream that is read gets an update at once. (Under load the server may still be
        // closing the silent connections and refuse a new one: asked again until a deadline.)
        let update = "event: update\ndata: {\"action_seq\":308,"
        var events = ""
        let deadline = ContinuousClock.now + .seconds(20)
        for _ in 0..<200 where ContinuousClock.now < deadline && !events.contains(update) {
            guard let reader = RawHTTPClient(port: port) else { continue }
            reader.send("GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n")
            events = reader.read(withinMilliseconds: 5_000) { $0.contains(update) }
        }
        #expect(events.contains("Content-Type: text/event-stream"), "\(events.prefix(300))")
        #expect(events.contains(update), "\(events.prefix(600))")

        // SIGTERM stops it promptly even with event streams open.
        let stopping = ContinuousClock.now
        inspect.signal(SIGTERM)
        #expect(await inspect.waitForExit(timeout: .seconds(10)) == 0, "\(inspect.diagnostics)")
        #expect(ContinuousClock.now - stopping < .seconds(5))
        withExtendedLifetime((streams, silent, rude)) {}
        await cluster.stop()
        #expect(cluster.authority.reap() == 0, "\(cluster.authority.diagnostics)")
    }

    @Test func badOptionsAreUsageErrorsThatSayWhatToDo() async throws {
        let cases: [([String], String)] = [
            (["inspect", "--app", "counter"], "inspect: nothing to inspect: give --feed EP --actions EP for a running cluster, --data DIR for a data directory, or both"),
            (["inspect", "--app", "counter", "--feed", "tcp://127.0.0.1:7003"], "inspect: --feed needs --actions too"),
            (["inspect", "--app", "counter", "--data", "/nonexistent-reactorbus"], "/nonexistent-reactorbus is not an authority's data directory (it has no journal/)"),
            (["inspect", "--app", "counter", "--data", "/tmp", "--listen", "7080"], "inspect: --listen '7080': expected HOST:PORT"),
            (["inspect", "--app", "counter", "--feed", "127.0.0.1:7003", "--actions", "tcp://127.0.0.1:7001"], "--feed '127.0.0.1:7003': not an endpoint"),
        ]
        for (arguments, message) in cases {
            let node = try ChildProcess.node(arguments)
            #expect(await node.waitForExit(timeout: .seconds(10)) == 64, "\(arguments)")
            #expect(node.diagnostics.contains(message), "\(arguments): \(node.diagnostics)")
            #expect(node.output.isEmpty, "\(arguments) printed \(node.output)")
        }
    }

    @Test func anInspectorOfAnotherAppExits78SayingWhichAppTheAuthorityRuns() async throws {
        let cluster = try await ClusterProcesses()
        let inspect = try ChildProcess.node(["inspect", "--app", "primes", "--feed", cluster.endpoints.feed, "--actions", cluster.endpoints.actions,
                                             "--listen", "127.0.0.1:0"], name: "inspect")
        #expect(await inspect.waitForExit(timeout: .seconds(20)) == 78, "\(inspect.diagnostics)")
        #expect(inspect.diagnostics.contains("inspect: the authority at \(cluster.endpoints.actions) runs app 'counter', not 'primes': use --app counter"),
                "\(inspect.diagnostics)")
        await cluster.stop()
        #expect(cluster.authority.reap() == 0, "\(cluster.authority.diagnostics)")
    }

    @Test(.enabled(if: browserInstalled, "chromium, chromium-driver and python3-selenium (scripts/ensure-deps.sh --browser)"))
    func thePageShowsTheLiveStateAnActionsDiffAndTimeTravelInAHeadlessBrowser() async throws {
        let (cluster, data) = try await knownHistory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let (inspect, url, _) = try await inspector(cluster, data: data)
        let artifacts = ChildProcess.packageRoot + "/.build/test-artifacts"
        try FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
        let screenshot = artifacts + "/inspector.png"
        try? FileManager.default.removeItem(atPath: screenshot)

        // The page shows version 8; then two more actions arrive, over server-sent events.
        let browser = try ChildProcess.program(executable: "/usr/bin/python3",
                                               arguments: [ChildProcess.packageRoot + "/scripts/inspect-browser-check.py", url, "8", "10", "5", "3", screenshot],
                                               name: "browser")
        #expect(await browser.waitForLine(timeout: .seconds(90)) { $0.contains("\"ready\"") } != nil, "\(browser.diagnostics)")
        try await send(cluster, Self.countUp, count: 2, thenApplied: 10)
        #expect(await browser.waitForExit(timeout: .seconds(120)) == 0, "\(browser.diagnostics)\(inspect.diagnostics)")
        let line = try #require(browser.output.last)
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        print("inspector screenshot: \(screenshot)")

        let live = try #require(seen["live"] as? [String: Any], "\(line)")
        #expect(live["version"] as? String == "10")
        #expect(live["action_seq"] as? String == "10")
        #expect(live["leaves"] as? [String: String] == ["count": "10"])
        #expect(live["workers"] as? String == "1")

        let detail = try #require(seen["detail"] as? [String: Any], "\(line)")
        #expect(detail["title"] as? String == #"action #5 {"countUpAsync":{}}"#)
        #expect(detail["sync"] as? [String] == [])
        let jobs = try #require(detail["jobs"] as? [[String: Any]], "\(line)")
        #expect(jobs.count == 1)
        #expect(jobs.first?["job"] as? String == "5.0")
        #expect(jobs.first?["mutations"] as? [String] == [#"v5 async #0 {"increase":{}}"#])
        #expect((jobs.first?["summary"] as? String)?.hasPrefix("job 5.0: worker unknown, dispatch not seen, done,") == true, "\(line)")
        #expect(detail["diff"] as? [[String: String]] == [["path": "count", "before": "4", "after": "5"]])

        let travel = try #require(seen["travel"] as? [String: Any], "\(line)")
        #expect(travel["info"] as? String == "version 3, last action 3 (from memory)")
        #expect(travel["leaves"] as? [String: String] == ["count": "3"])
        #expect(seen["charts"] as? [String: Int] == ["chart-applied": 1, "chart-latency": 1], "\(line)")

        let png = try #require(FileManager.default.contents(atPath: screenshot), "no screenshot at \(screenshot)")
        #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        #expect(png.count > 20_000)

        inspect.signal(SIGTERM)
        #expect(await inspect.waitForExit(timeout: .seconds(10)) == 0, "\(inspect.diagnostics)")
        let stats = try await cluster.stats()
        #expect(stats["actions_accepted"] == 10, "the inspector sent no action")
        await cluster.stop()
        #expect(cluster.authority.reap() == 0, "\(cluster.authority.diagnostics)")
    }
}
