import Foundation
import ReactorApps
import ReactorBus
import ReactorLog
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Clients, workers and observers given several authority endpoints move to the next one when
/// theirs is lost. Without replication, a takeover is simulated with one data directory: authority
/// A (loopback TCP, ports of its own choosing) serves; it is SIGKILLed under load; authority B
/// starts on the same directory at ipc endpoints fixed in advance (the second entry of every
/// list), recovers the journal (client ledger included) and serves.
@Suite(.spawnsProcesses, .serialized) struct FailoverTests {
    typealias Endpoints = (actions: String, workers: String, feed: String)

    let directory = NSTemporaryDirectory() + "reactorbus-failover-\(UUID().uuidString)"
    /// B's endpoints: known before B runs, so the lists can name them.
    let b: Endpoints = {
        let stem = "ipc://" + NSTemporaryDirectory() + "rbfo-\(UUID().uuidString.prefix(8))"
        return (stem + "-actions", stem + "-workers", stem + "-feed")
    }()

    func authority(_ endpoints: Endpoints? = nil) throws -> ChildProcess {
        try ChildProcess.node(["authority", "--app", "counter", "--data", directory, "--heartbeat", "1",
                               "--actions", endpoints?.actions ?? "tcp://127.0.0.1:*", "--workers", endpoints?.workers ?? "tcp://127.0.0.1:*",
                               "--feed", endpoints?.feed ?? "tcp://127.0.0.1:*"], name: endpoints == nil ? "authority-a" : "authority-b")
    }

    /// Removes the data directory and B's socket files.
    func cleanUp() {
        try? FileManager.default.removeItem(atPath: directory)
        for endpoint in [b.actions, b.workers, b.feed] { try? FileManager.default.removeItem(atPath: String(endpoint.dropFirst("ipc://".count))) }
    }

    /// SIGKILLs A once its state version reaches `version` (while `load` still runs), then starts
    /// B on the same data directory and waits until it serves.
    func takeOver(from a: ChildProcess, at version: UInt64, actions: String, while load: ChildProcess? = nil) async throws -> ChildProcess {
        let reached = try await WireProbe(actions: actions).stats(within: .seconds(60)) { $0["version"] ?? 0 >= version }
        try #require(reached["version"] ?? 0 >= version, "A never reached version \(version)\(a.diagnostics)")
        if let load { try #require(load.isRunning, "the load ended before the kill: raise it\(load.diagnostics)") }
        a.signal(SIGKILL)
        #expect(await a.waitForExit() != 0)
        let next = try authority(b)
        _ = try await next.endpoints(timeout: .seconds(60))
        #expect(next.diagnostics.contains("recovered version"), "\(next.diagnostics)")
        return next
    }

    /// Every stderr line of `child` that contains `text`.
    func lines(of child: ChildProcess, containing text: String) -> [String] {
        let log = (try? String(contentsOfFile: child.logPath, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init).filter { $0.contains(text) }
    }

    /// `observe --once` over both authorities' lists (A is dead: it must find B).
    func observeOnce(_ a: Endpoints) async throws -> String? {
        let observe = try ChildProcess.node(["observe", "--app", "counter", "--feed", "\(a.feed),\(b.feed)", "--actions", "\(a.actions),\(b.actions)",
                                             "--once", "--json", "--timeout", "30"], name: "observe-once")
        #expect(await observe.waitForExit(timeout: .seconds(60)) == 0, "\(observe.diagnostics)")
        return observe.output.first
    }

    /// The moves a node logged from A's endpoint to B's, and back: a list of two ends on B after
    /// an odd number of moves.
    func expectMovedToB(_ child: ChildProcess, from lost: String, to next: String) {
        let moves = lines(of: child, containing: "; trying ")
        let toB = moves.filter { $0.contains("authority \(lost) lost") && $0.contains("trying \(next)") }
        #expect(!toB.isEmpty, "no move from \(lost) to \(next) logged\(child.diagnostics)")
        #expect(moves.count % 2 == 1, "\(moves)")
    }

    @Test func sendMovesToTheNextAuthorityAndEveryActionIsAppliedExactlyOnce() async throws {
        defer { cleanUp() }
        let a = try authority()
        let aEndpoints = try await a.endpoints()
        let total = 50_000
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", "\(aEndpoints.actions),\(b.actions)", "--repeat", String(total),
                                          "--concurrency", "64", "--connect-timeout", "60", #"{"countUp":{}}"#], name: "send")
        let authorityB = try await takeOver(from: a, at: 1_000, actions: aEndpoints.actions, while: send)
        #expect(await send.waitForExit(timeout: .seconds(120)) == 0, "\(send.diagnostics)\(authorityB.diagnostics)")
        let summary = try #require(send.output.last)
        #expect(summary.contains(#""sent":50000,"acked":50000,"failed":0,"last_version":50000"#), "\(summary)")
        expectMovedToB(send, from: aEndpoints.actions, to: b.actions)
        // Each countUp applied once: 50,000 accepted actions, 50,000 versions, however many were resent.
        let stats = try await WireProbe(actions: b.actions).stats()
        #expect(stats["version"] == UInt64(total))
        #expect(stats["action_seq"] == UInt64(total))
        #expect(try await observeOnce(aEndpoints) == #"{"version":50000,"state":{"count":50000}}"#)
        authorityB.signal(SIGTERM)
        #expect(await authorityB.waitForExit() == 0)
    }

    @Test func anActionClientResendsItsUnacknowledgedActionsToTheNextAuthorityUnderItsClientID() async throws {
        defer { cleanUp() }
        let a = try authority()
        let aEndpoints = try await a.endpoints()
        let total = 20_000
        let context = try ZMQContext()
        var configuration = ActionClientConfiguration(actionsEndpoint: "\(aEndpoints.actions),\(b.actions)", window: 100)
        configuration.connectTimeout = .seconds(60)
        let log = Box<[String]>([])
        let logger = Logger(label: "client", level: .info, sink: .capture { line in log.value.append(line) })
        let client = try ActionClient<Counter>(configuration: configuration, logger: logger, context: context)
        try client.start()
        let acks = AckCounter()
        let sending = Task { await acks.send(total, lanes: 100, through: client) { _ in .countUp } }
        try await acks.wait(untilAcked: 1_000)
        let authorityB = try await takeOver(from: a, at: 1_000, actions: aEndpoints.actions)
        await sending.value
        let moves = log.value.filter { $0.contains("; trying ") }
        #expect(moves.contains { $0.contains("authority \(aEndpoints.actions) lost") && $0.contains("; trying \(b.actions)") }, "\(moves)")
        #expect(moves.count % 2 == 1, "\(moves)")
        #expect(acks.failures.isEmpty, "\(acks.failures.prefix(3))")
        #expect(acks.acked == total)
        // The same client, now talking to B, reads B's state: every action once.
        let snapshot = try await client.snapshot()
        #expect(snapshot.version == UInt64(total))
        #expect(snapshot.state.count == total)
        let stats = try await client.stats()
        #expect(stats["action_seq"] == UInt64(total))
        #expect(stats["clients"] == 1)
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
        authorityB.signal(SIGTERM)
        #expect(await authorityB.waitForExit() == 0)
    }

    @Test func aWorkerRegistersWithTheNextAuthorityAndEveryEffectIsAppliedExactlyOnce() async throws {
        defer { cleanUp() }
        let a = try authority()
        let aEndpoints = try await a.endpoints()
        let worker = try ChildProcess.node(["worker", "--app", "counter", "--authority", "\(aEndpoints.workers),\(b.workers)", "--name", "w",
                                            "--concurrency", "16", "--effect-delay", "0.02", "--metrics", "127.0.0.1:0"], name: "worker")
        let metricsLine = try #require(await worker.waitForLine { $0.hasPrefix(#"{"metrics""#) }, "\(worker.diagnostics)")
        let port = try #require(metricsLine.split(separator: ":").last.flatMap { UInt16($0.filter(\.isNumber)) })
        let total = 2_000
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", "\(aEndpoints.actions),\(b.actions)", "--repeat", String(total),
                                          "--concurrency", "64", "--connect-timeout", "60", #"{"countUpAsync":{}}"#], name: "send")
        // (send may be done already: acks do not wait for effects. The worker's jobs are the load.)
        let authorityB = try await takeOver(from: a, at: 200, actions: aEndpoints.actions)
        #expect(await send.waitForExit(timeout: .seconds(120)) == 0, "\(send.diagnostics)")
        // Every effect's one mutation applied once: the unfinished ones re-dispatched by B, the
        // results A had applied not applied again.
        let stats = try await WireProbe(actions: b.actions).stats(within: .seconds(60)) { $0["version"] ?? 0 >= UInt64(total) && $0["open_jobs"] == 0 }
        #expect(stats["version"] == UInt64(total), "\(authorityB.diagnostics)\(worker.diagnostics)")
        #expect(stats["action_seq"] == UInt64(total))
        #expect(stats["open_jobs"] == 0)
        #expect(stats["workers"] == 1)
        expectMovedToB(worker, from: aEndpoints.workers, to: b.workers)
        #expect(!lines(of: worker, containing: "missed heartbeats").isEmpty)
        let body = try #require(RawHTTPClient.exchange(port: port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")?.body)
        func value(_ name: String) -> Int? {
            body.split(separator: "\n").first { $0.hasPrefix(name + "{") }.flatMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        }
        let failovers = try #require(value("reactorbus_worker_failovers_total"), "\(body)")
        #expect(failovers % 2 == 1)
        #expect(value("reactorbus_worker_reconnects_total") == failovers)
        #expect(value("reactorbus_worker_registered") == 1)
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0)
        authorityB.signal(SIGTERM)
        #expect(await authorityB.waitForExit() == 0)
    }

    @Test func anObserverFollowsTheNextAuthorityToTheFinalState() async throws {
        defer { cleanUp() }
        let a = try authority()
        let aEndpoints = try await a.endpoints()
        let observer = try ChildProcess.node(["observe", "--app", "counter", "--feed", "\(aEndpoints.feed),\(b.feed)",
                                              "--actions", "\(aEndpoints.actions),\(b.actions)", "--json"], name: "observer")
        #expect(await observer.waitForLine { $0.hasPrefix(#"{"version""#) } != nil, "\(observer.diagnostics)")
        let total = 50_000
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", "\(aEndpoints.actions),\(b.actions)", "--repeat", String(total),
                                          "--concurrency", "64", "--connect-timeout", "60", #"{"countUp":{}}"#], name: "send")
        let authorityB = try await takeOver(from: a, at: 1_000, actions: aEndpoints.actions, while: send)
        #expect(await send.waitForExit(timeout: .seconds(120)) == 0, "\(send.diagnostics)")
        let final = #"{"version":50000,"state":{"count":50000}}"#
        #expect(await observer.waitForLine(timeout: .seconds(60)) { $0 == final } != nil, "\(observer.output.suffix(3))\(observer.diagnostics)")
        // Versions only ever grow on the way, across the move too.
        let versions = observer.output.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["version"] as? Int
        }
        #expect(versions == versions.sorted() && Set(versions).count == versions.count)
        expectMovedToB(observer, from: aEndpoints.feed, to: b.feed)
        observer.signal(SIGTERM)
        #expect(await observer.waitForExit() == 0)
        authorityB.signal(SIGTERM)
        #expect(await authorityB.waitForExit() == 0)
    }

    /// Nobody listens at either endpoint (ipc paths that do not exist): send goes round both, and
    /// gives up after its connect timeout, counted over the whole list, naming the list.
    @Test func sendGivesUpOnAListOfAbsentAuthoritiesWithinItsConnectTimeout() async throws {
        let list = "\(b.actions),\(b.feed)"
        let started = ContinuousClock.now
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", list, "--connect-timeout", "3", "--repeat", "10", "--log-level", "debug",
                                          #"{"countUp":{}}"#], name: "send")
        let status = await send.waitForExit(timeout: .seconds(30))
        let elapsed = ContinuousClock.now - started
        #expect(status == 69, "\(send.diagnostics)")
        #expect(elapsed >= .seconds(3) && elapsed < .seconds(3) + .seconds(6), "gave up after \(elapsed)")
        #expect(send.diagnostics.contains("the authority at \(list) could not be reached for 3 s"), "\(send.diagnostics)")
        #expect(send.output.last?.contains(#""acked":0,"#) == true)
        // Each path refuses at once, so the client moves on after 25 ms rather than the failover
        // time (1 s), round robin: B's actions, its feed path, B's actions again... Only the
        // first move is logged at info; the rest are debug lines.
        let moves = lines(of: send, containing: "; trying ")
        #expect(moves.count >= 6 && moves.count <= 3_000 / 25 + 1, "\(moves.count) moves")
        #expect(moves.first?.contains("INFO") == true && moves.dropFirst().allSatisfy { $0.contains("DEBUG") }, "\(moves.prefix(3))")
        #expect(moves.first?.contains("authority \(b.actions) lost (it refused the connection)") == true && moves.first?.hasSuffix("trying \(b.feed)") == true,
                "\(moves.prefix(3))")
        for (index, move) in moves.enumerated() {
            #expect(move.hasSuffix("trying \(index % 2 == 0 ? b.feed : b.actions)"), "move \(index): \(move)")
        }
    }

    @Test func aBadEntryInAListIsAUsageErrorThatNamesIt() async throws {
        let cases: [([String], String)] = [
            (["send", "--app", "counter", "--actions", "tcp://127.0.0.1:7001,bogus", #"{"countUp":{}}"#],
             "--actions 'tcp://127.0.0.1:7001,bogus': entry 2 of 2, 'bogus': not an endpoint (e.g. tcp://127.0.0.1:7001)"),
            (["worker", "--app", "counter", "--authority", "tcp://127.0.0.1:7002,,tcp://127.0.0.1:8002"],
             "--authority 'tcp://127.0.0.1:7002,,tcp://127.0.0.1:8002': entry 2 of 3 is empty"),
            (["observe", "--app", "counter", "--feed", "tcp://127.0.0.1:7003,tcp://127.0.0.1:8003", "--actions", "tcp://127.0.0.1:7001"],
             "observe: --feed lists 2 endpoint(s) and --actions 1: give one actions endpoint per feed endpoint"),
            (["observe", "--app", "counter", "--feed", "tcp://127.0.0.1:7003,tcp://127.0.0.1:0", "--actions", "tcp://127.0.0.1:7001,tcp://127.0.0.1:8001"],
             "--feed 'tcp://127.0.0.1:7003,tcp://127.0.0.1:0': entry 2 of 2, 'tcp://127.0.0.1:0': connect to a real port"),
        ]
        for (arguments, message) in cases {
            let child = try ChildProcess.node(arguments)
            #expect(await child.waitForExit() == 64, "\(arguments)\(child.diagnostics)")
            #expect(child.diagnostics.contains(message), "\(arguments)\(child.diagnostics)")
        }
    }
}
