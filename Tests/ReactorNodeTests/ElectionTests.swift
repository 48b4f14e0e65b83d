import Coordination
import Foundation
import ReactorApps
import ReactorBus
import ReactorLog
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Authorities elected on a real etcd (started by the test on loopback): the first candidate
/// serves, the second follows it; when the primary dies the standby takes over with the exact
/// state; a primary paused past its lease never acknowledges anything once resumed.
@Suite(.spawnsProcesses, .serialized) struct ElectionTests {
    typealias Endpoints = (actions: String, workers: String, feed: String, replication: String)

    let root = NSTemporaryDirectory() + "rbel-\(UUID().uuidString.prefix(8))"

    /// One candidate's ipc endpoints, known before it runs, so that clients can list both.
    func endpoints(_ name: String) -> Endpoints {
        let stem = "ipc://\(root)-\(name)"
        return (stem + "-actions", stem + "-workers", stem + "-feed", stem + "-replication")
    }

    func candidate(_ name: String, etcd: EtcdServer, mode: String, ttl: Int = 1) throws -> ChildProcess {
        let own = endpoints(name)
        return try ChildProcess.node([
            "authority", "--app", "counter", "--data", "\(root)-\(name)-data", "--heartbeat", "0.3",
            "--actions", own.actions, "--workers", own.workers, "--feed", own.feed,
            "--replication", own.replication, "--replication-mode", mode,
            "--election", etcd.clientURL, "--election-ttl", String(ttl), "--name", name,
        ], name: "authority-\(name)")
    }

    func cleanUp() {
        for name in ["a", "b", "c"] {
            try? FileManager.default.removeItem(atPath: "\(root)-\(name)-data")
            let own = endpoints(name)
            for endpoint in [own.actions, own.workers, own.feed, own.replication] {
                try? FileManager.default.removeItem(atPath: String(endpoint.dropFirst("ipc://".count)))
            }
        }
    }

    /// a, then b and c under `sync` replication: a serves (its endpoints line), b and c follow it.
    func threeCandidates(etcd: EtcdServer, ttl: Int = 1) async throws -> (primary: ChildProcess, standbys: [String: ChildProcess]) {
        let a = try candidate("a", etcd: etcd, mode: "sync", ttl: ttl)
        #expect(await a.waitForLine { $0.contains(#""actions":"#) } != nil, "a never served\(a.diagnostics)")
        let standbys = ["b": try candidate("b", etcd: etcd, mode: "sync", ttl: ttl), "c": try candidate("c", etcd: etcd, mode: "sync", ttl: ttl)]
        for (name, standby) in standbys {
            #expect(await standby.waitForLine { $0.contains("standby_of") } != nil, "\(name) never followed\(standby.diagnostics)")
        }
        return (a, standbys)
    }

    /// SIGTERM to each, and each must exit 0 (a primary resigns, a standby just stops).
    func stopGracefully(_ nodes: [String: ChildProcess]) async {
        for node in nodes.values { node.signal(SIGTERM) }
        for (name, node) in nodes { #expect(await node.waitForExit(timeout: .seconds(20)) == 0, "\(name)\(node.diagnostics)") }
    }

    /// The name of the standby that printed its endpoints line (it was promoted), within 30 s.
    func promotedStandby(of standbys: [String: ChildProcess]) async throws -> String {
        var winner: String?
        let deadline = ContinuousClock.now + .seconds(30)
        while winner == nil, ContinuousClock.now < deadline {
            winner = standbys.first { $0.value.output.contains { $0.contains(#""actions":"#) } }?.key
            if winner == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        return try #require(winner, "no standby was promoted\(standbys.values.map(\.diagnostics).joined())")
    }

    /// Whether process `pid` is stopped (state `T` in /proc/PID/stat).
    func isStopped(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("T")
    }

    /// The last applied version and committed journal LSN a standby registered in etcd.
    func standbyProgress(_ name: String, etcd: EtcdServer) -> (version: UInt64, lsn: UInt64)? {
        guard let client = try? EtcdClient(endpointList: etcd.clientURL),
              let entry = try? client.get("/reactorbus/counter/standbys/\(name)"),
              let object = try? JSONSerialization.jsonObject(with: entry.value) as? [String: Any],
              let version = (object["version"] as? NSNumber)?.uint64Value, let lsn = (object["lsn"] as? NSNumber)?.uint64Value else { return nil }
        return (version, lsn)
    }

    /// Waits up to `limit` for a standby's registration to satisfy `condition`; the last one read.
    func standbyProgress(_ name: String, etcd: EtcdServer, within limit: Duration = .seconds(30),
                         until condition: ((version: UInt64, lsn: UInt64)) -> Bool) async throws -> (version: UInt64, lsn: UInt64)? {
        let deadline = ContinuousClock.now + limit
        var progress = standbyProgress(name, etcd: etcd)
        while progress.map(condition) != true, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            progress = standbyProgress(name, etcd: etcd)
        }
        return progress
    }

    /// Three candidates under `sync` replication (a primary needs a standby to acknowledge): a
    /// serves, b and c follow; a is SIGKILLed under load; one of b and c is promoted, the other
    /// follows it, and the load goes on to the exact total.
    @Test func aStandbyTakesOverFromAKilledPrimaryWithEveryAckedActionExactlyOnce() async throws {
        defer { cleanUp() }
        let etcd = try await EtcdServer.start()
        defer { Task { await etcd.stop() } }
        let (a, standbys) = try await threeCandidates(etcd: etcd)
        let all = ["a", "b", "c"].map(endpoints)
        let total = 20_000
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", all.map(\.actions).joined(separator: ","), "--repeat", String(total),
                                          "--concurrency", "64", "--connect-timeout", "60", #"{"countUp":{}}"#], name: "send")
        let reached = try await WireProbe(actions: all[0].actions).stats(within: .seconds(60)) { $0["version"] ?? 0 >= 2_000 }
        try #require(reached["version"] ?? 0 >= 2_000, "a never reached version 2,000\(a.diagnostics)")
        try #require(send.isRunning, "the load ended before the kill: raise it")
        a.signal(SIGKILL)
        let killed = ContinuousClock.now
        #expect(await a.waitForExit() != 0)
        let promoted = try await promotedStandby(of: standbys)
        print("election: \(promoted) serves \(ContinuousClock.now - killed) after a was killed")
        let other = try #require(standbys[promoted == "b" ? "c" : "b"])
        #expect(await send.waitForExit(timeout: .seconds(120)) == 0, "\(send.diagnostics)")
        let summary = try #require(send.output.last)
        #expect(summary.contains(#""sent":\#(total),"acked":\#(total),"failed":0"#), "\(summary)")
        let final = try await WireProbe(actions: endpoints(promoted).actions).stats(within: .seconds(30)) { $0["version"] == UInt64(total) }
        #expect(final["version"] == UInt64(total), "\(standbys[promoted]?.diagnostics ?? "")")
        #expect(final["action_seq"] == UInt64(total))
        #expect(final["standbys"] == 1, "the other standby follows the new primary")
        #expect(standbys[promoted]?.diagnostics.contains("won term") == true)
        #expect(other.diagnostics.contains("a new primary, \(promoted)"), "\(other.diagnostics)")
        await stopGracefully(standbys)
    }

    /// The issue's mix: two clients (one of sync `countUp`, one of `countUpAsync`, whose effects
    /// two workers run), every node given all three authorities; the primary is SIGKILLed at a
    /// random version; a standby takes over and the count ends exact, every job done.
    @Test func mixedSyncAndAsyncActionsFromSeveralClientsSurviveThePrimarysDeathExactly() async throws {
        defer { cleanUp() }
        let etcd = try await EtcdServer.start()
        defer { Task { await etcd.stop() } }
        let (a, standbys) = try await threeCandidates(etcd: etcd)
        let all = ["a", "b", "c"].map(endpoints)
        let workers = try (1...2).map { index in
            try ChildProcess.node(["worker", "--app", "counter", "--authority", all.map(\.workers).joined(separator: ","), "--heartbeat", "0.3",
                                   "--concurrency", "16", "--name", "w\(index)"], name: "worker-\(index)")
        }
        let ready = try await WireProbe(actions: all[0].actions).stats(within: .seconds(30)) { $0["workers"] == 2 }
        try #require(ready["workers"] == 2, "the workers did not register\(a.diagnostics)")
        let each = 5_000
        let senders = try [#"{"countUp":{}}"#, #"{"countUpAsync":{}}"#].enumerated().map { index, action in
            try ChildProcess.node(["send", "--app", "counter", "--actions", all.map(\.actions).joined(separator: ","), "--repeat", String(each),
                                   "--concurrency", "32", "--connect-timeout", "60", "--client-id", "client-\(index)", action], name: "send-\(index)")
        }
        let killAt = UInt64.random(in: 500...4_000)
        let reached = try await WireProbe(actions: all[0].actions).stats(within: .seconds(60)) { $0["version"] ?? 0 >= killAt }
        try #require(reached["version"] ?? 0 >= killAt, "a never reached version \(killAt)\(a.diagnostics)")
        let running = senders.filter(\.isRunning).count
        try #require(running == 2, "the load ended before the kill: raise it")
        a.signal(SIGKILL)
        #expect(await a.waitForExit() != 0)
        for sender in senders {
            #expect(await sender.waitForExit(timeout: .seconds(120)) == 0,
                    "\(sender.diagnostics)\(standbys.values.map(\.diagnostics).joined())\(workers.map(\.diagnostics).joined())")
            #expect(sender.output.last?.contains(#""sent":\#(each),"acked":\#(each),"failed":0"#) == true, "\(sender.output)")
        }
        let promoted = try #require(standbys.first { $0.value.output.contains { $0.contains(#""actions":"#) } }?.key,
                                    "no standby was promoted\(standbys.values.map(\.diagnostics).joined())")
        let total = UInt64(2 * each)
        let final = try await WireProbe(actions: endpoints(promoted).actions).stats(within: .seconds(60)) { $0["version"] == total && $0["open_jobs"] == 0 }
        #expect(final["version"] == total, "killed at version \(killAt)\(standbys[promoted]?.diagnostics ?? "")")
        #expect(final["action_seq"] == total)
        #expect(final["open_jobs"] == 0)
        #expect(final["queued_jobs"] == 0)
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers { _ = await worker.waitForExit(timeout: .seconds(20)) }
        await stopGracefully(standbys)
    }

    /// Async actions that no worker runs are journaled and acknowledged (`sync`: once a standby
    /// has them) but change no version. With b stopped, only c gets 200 of them: b and c stand
    /// at one version, c's journal 200 records further. When the primary dies c must take over
    /// (b, whose name sorts first, would lose the 200 acknowledged actions, and refuse c as a
    /// standby whose journal ends after its own), and b must follow c.
    @Test func theStandbyWhoseJournalReachesFurthestTakesOverWhenVersionsTie() async throws {
        defer { cleanUp() }
        let etcd = try await EtcdServer.start()
        defer { Task { await etcd.stop() } }
        // A lease long enough that b, stopped for a while, keeps its registration.
        let (a, standbys) = try await threeCandidates(etcd: etcd, ttl: 5)
        let b = try #require(standbys["b"])
        let actions = endpoints("a").actions
        let synced = try ChildProcess.node(["send", "--app", "counter", "--actions", actions, "--repeat", "50", #"{"countUp":{}}"#], name: "send-sync")
        #expect(await synced.waitForExit(timeout: .seconds(30)) == 0, "\(synced.diagnostics)")
        for name in ["b", "c"] {
            let progress = try await standbyProgress(name, etcd: etcd) { $0.version == 50 }
            try #require(progress?.version == 50, "\(name) did not register version 50\(standbys[name]?.diagnostics ?? "")")
        }
        // Read before b stops: stopped long on a slow machine, its lease (and key) may end.
        let behind = try #require(standbyProgress("b", etcd: etcd))
        b.signal(SIGSTOP)
        let dropped = try await WireProbe(actions: actions).stats(within: .seconds(30)) { $0["standbys"] == 1 }
        try #require(dropped["standbys"] == 1, "a did not drop the stopped standby\(a.diagnostics)")
        let journaled = try ChildProcess.node(["send", "--app", "counter", "--actions", actions, "--repeat", "200", #"{"countUpAsync":{}}"#], name: "send-async")
        #expect(await journaled.waitForExit(timeout: .seconds(30)) == 0, "\(journaled.diagnostics)")
        #expect(journaled.output.last?.contains(#""sent":200,"acked":200,"failed":0"#) == true, "\(journaled.output)")
        let ahead = try await standbyProgress("c", etcd: etcd) { $0.lsn >= behind.lsn + 200 }
        // One record per accepted action.
        try #require(ahead?.lsn == behind.lsn + 200 && ahead?.version == behind.version, "c: \(String(describing: ahead)), b: \(behind)")
        a.signal(SIGKILL)
        #expect(await a.waitForExit() != 0)
        b.signal(SIGCONT)
        let promoted = try await promotedStandby(of: standbys)
        #expect(promoted == "c", "\(standbys.values.map(\.diagnostics).joined())")
        let final = try await WireProbe(actions: endpoints(promoted).actions).stats(within: .seconds(30)) { $0["standbys"] == 1 }
        #expect(final["standbys"] == 1, "b follows c\(b.diagnostics)")
        #expect(final["version"] == 50)
        #expect(final["action_seq"] == 250)
        #expect(final["open_jobs"] == 200)
        #expect(final["queued_jobs"] == 200)
        #expect(b.diagnostics.contains("a new primary, c"), "\(b.diagnostics)")
        await stopGracefully(standbys)
    }

    /// Under load: standby b is SIGKILLed and restarted on its directory and catches up; c is
    /// stopped; the primary is SIGKILLed, so b (the one restarted) must take over; c rejoins as
    /// b's standby, and the load ends with every action acked and applied exactly once.
    @Test func aRestartedStandbyCatchesUpAndTakesOverWithTheExactState() async throws {
        defer { cleanUp() }
        let etcd = try await EtcdServer.start()
        defer { Task { await etcd.stop() } }
        let (a, standbys) = try await threeCandidates(etcd: etcd)
        let all = ["a", "b", "c"].map(endpoints)
        let total = 30_000
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", all.map(\.actions).joined(separator: ","), "--repeat", String(total),
                                          "--concurrency", "16", "--connect-timeout", "60", #"{"countUp":{}}"#], name: "send")
        let reached = try await WireProbe(actions: all[0].actions).stats(within: .seconds(60)) { $0["version"] ?? 0 >= 1_000 }
        try #require(reached["version"] ?? 0 >= 1_000, "a never reached version 1,000\(a.diagnostics)")
        let oldB = try #require(standbys["b"])
        oldB.signal(SIGKILL)
        #expect(await oldB.waitForExit() != 0)
        let b = try candidate("b", etcd: etcd, mode: "sync")
        #expect(await b.waitForLine { $0.contains("standby_of") } != nil, "b did not rejoin\(b.diagnostics)")
        // Caught up: b registers a version at least the one a had after b came back.
        let since = try await WireProbe(actions: all[0].actions).stats()["version"] ?? 0
        let caughtUp = try await standbyProgress("b", etcd: etcd) { $0.version >= since }
        try #require((caughtUp?.version ?? 0) >= since, "b did not catch up to \(since)\(b.diagnostics)")
        let c = try #require(standbys["c"])
        c.signal(SIGTERM)
        #expect(await c.waitForExit(timeout: .seconds(20)) == 0, "\(c.diagnostics)")
        try #require(send.isRunning, "the load ended before the primary's kill: raise it")
        a.signal(SIGKILL)
        #expect(await a.waitForExit() != 0)
        #expect(await b.waitForLine(timeout: .seconds(30)) { $0.contains(#""actions":"#) } != nil, "b was not promoted\(b.diagnostics)")
        // Sync: b acknowledges again once a standby follows it.
        let rejoined = try candidate("c", etcd: etcd, mode: "sync")
        #expect(await rejoined.waitForLine { $0.contains("standby_of") } != nil, "c did not rejoin\(rejoined.diagnostics)")
        #expect(await send.waitForExit(timeout: .seconds(120)) == 0, "\(send.diagnostics)")
        #expect(send.output.last?.contains(#""sent":\#(total),"acked":\#(total),"failed":0"#) == true, "\(send.output)")
        let final = try await WireProbe(actions: all[1].actions).stats(within: .seconds(30)) { $0["version"] == UInt64(total) }
        #expect(final["version"] == UInt64(total), "\(b.diagnostics)")
        #expect(final["action_seq"] == UInt64(total))
        await stopGracefully(["b": b, "c": rejoined])
    }

    @Test func aPrimaryPausedPastItsLeaseNeverAcknowledgesAgainAndStops() async throws {
        defer { cleanUp() }
        let etcd = try await EtcdServer.start()
        defer { Task { await etcd.stop() } }
        let a = try candidate("a", etcd: etcd, mode: "async")
        #expect(await a.waitForLine { $0.contains(#""actions":"#) } != nil, "a never served\(a.diagnostics)")
        let b = try candidate("b", etcd: etcd, mode: "async")
        #expect(await b.waitForLine { $0.contains("standby_of") } != nil, "b never followed\(b.diagnostics)")
        let (ea, eb) = (endpoints("a"), endpoints("b"))

        // A client of a only: 200 actions acked, and b has them all before the pause.
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        var configuration = ActionClientConfiguration(actionsEndpoint: ea.actions, timeout: .seconds(1), retries: 2, window: 16)
        configuration.connectTimeout = .seconds(2)
        let client = try ActionClient<Counter>(configuration: configuration, logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        defer { client.close() }
        for _ in 0..<200 { _ = try await client.send(.countUp) }
        let caughtUp = try await standbyProgress("b", etcd: etcd, within: .seconds(20)) { $0.version == 200 }
        try #require(caughtUp?.version == 200, "b did not catch up\(b.diagnostics)")

        // Paused past its lease: b takes over; actions sent to a meanwhile wait in its socket.
        a.signal(SIGSTOP)
        // Only once the kernel shows a stopped ('T'): an action that arrives before the pause
        // takes effect is acknowledged, rightly, before b's term began.
        let pauseDeadline = ContinuousClock.now + .seconds(10)
        while !isStopped(a.pid), ContinuousClock.now < pauseDeadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(isStopped(a.pid), "a did not stop")
        let late = Task { () -> Int in
            var acked = 0
            for _ in 0..<5 where (try? await client.send(.countUp)) != nil { acked += 1 }
            return acked
        }
        let promoted = await b.waitForLine(timeout: .seconds(30)) { $0.contains(#""actions":"#) }
        #expect(promoted != nil, "b was not promoted\(b.diagnostics)")
        a.signal(SIGCONT)
        #expect(await a.waitForExit(timeout: .seconds(20)) == 75, "\(a.diagnostics)")
        #expect(await late.value == 0, "a acknowledged an action after b's term began")
        #expect(a.diagnostics.contains("deposed"), "\(a.diagnostics)")
        let stats = try await WireProbe(actions: eb.actions).stats(within: .seconds(10)) { $0["version"] == 200 }
        #expect(stats["version"] == 200, "\(b.diagnostics)")
        // The deposed data directory may not rejoin as it is.
        let again = try candidate("a", etcd: etcd, mode: "async")
        #expect(await again.waitForExit(timeout: .seconds(20)) == 78, "\(again.diagnostics)")
        #expect(again.diagnostics.contains("was primary in term"), "\(again.diagnostics)")
        b.signal(SIGTERM)
        #expect(await b.waitForExit(timeout: .seconds(20)) == 0, "\(b.diagnostics)")
    }

    /// `send`, `observe` and `worker` given `--election` instead of endpoints read them from etcd:
    /// the primary first, then the standbys. They work against the primary, and after it is
    /// SIGKILLed the worker moves on to the new one and a new `send --election` finds it first.
    @Test func nodesGivenTheElectionFindThePrimaryInEtcdAndFollowTheTakeover() async throws {
        defer { cleanUp() }
        let etcd = try await EtcdServer.start()
        defer { Task { await etcd.stop() } }
        let (a, standbys) = try await threeCandidates(etcd: etcd)
        // The standbys say where they serve once promoted under their keys.
        for name in ["b", "c"] { _ = try await standbyProgress(name, etcd: etcd, within: .seconds(20)) { _ in true } }
        func send(_ count: Int, _ action: String) async throws -> ChildProcess {
            let send = try ChildProcess.node(["send", "--app", "counter", "--election", etcd.clientURL, "--repeat", String(count),
                                              "--connect-timeout", "60", action], name: "send")
            #expect(await send.waitForExit(timeout: .seconds(90)) == 0, "\(send.diagnostics)")
            #expect(send.output.last?.contains(#""acked":\#(count),"failed":0"#) == true, "\(send.output)")
            return send
        }
        _ = try await send(1_000, #"{"countUp":{}}"#)
        let worker = try ChildProcess.node(["worker", "--app", "counter", "--election", etcd.clientURL, "--heartbeat", "0.3", "--name", "w-elected"], name: "worker")
        _ = try await send(100, #"{"countUpAsync":{}}"#)
        let observe = try ChildProcess.node(["observe", "--app", "counter", "--election", etcd.clientURL, "--once", "--json"], name: "observe")
        #expect(await observe.waitForExit(timeout: .seconds(30)) == 0, "\(observe.diagnostics)")
        let applied = try await WireProbe(actions: endpoints("a").actions).stats(within: .seconds(30)) { $0["version"] == 1_100 }
        #expect(applied["version"] == 1_100, "\(worker.diagnostics)")
        #expect(observe.output.first?.hasPrefix(#"{"version":"#) == true, "\(observe.output)")

        a.signal(SIGKILL)
        #expect(await a.waitForExit() != 0)
        let promoted = try await promotedStandby(of: standbys)
        // The new primary is the leader in etcd now: a new send finds it first; the worker,
        // which read the list at its start, moves along it to the new primary and runs the jobs.
        let after = try await send(50, #"{"countUpAsync":{}}"#)
        #expect(!after.diagnostics.contains("lost"), "send --election went to the new primary first\(after.diagnostics)")
        let final = try await WireProbe(actions: endpoints(promoted).actions).stats(within: .seconds(60)) { $0["version"] == 1_150 }
        #expect(final["version"] == 1_150, "\(worker.diagnostics)")
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit(timeout: .seconds(20)) == 0)
        await stopGracefully(standbys)
    }

    @Test func electionAndEndpointsTogetherAreAUsageErrorAndAnEmptyElectionIsUnavailable() async throws {
        let etcd = try await EtcdServer.start()
        defer { Task { await etcd.stop() } }
        let both = try ChildProcess.node(["send", "--app", "counter", "--election", etcd.clientURL, "--actions", "tcp://127.0.0.1:7001", #"{"countUp":{}}"#], name: "both")
        #expect(await both.waitForExit() == 64)
        #expect(both.diagnostics.contains("send: give --election or --actions, not both"), "\(both.diagnostics)")
        let none = try ChildProcess.node(["observe", "--app", "counter", "--election", etcd.clientURL, "--once"], name: "none")
        #expect(await none.waitForExit() == 69)
        #expect(none.diagnostics.contains("no authority of app counter is registered in etcd at \(etcd.clientURL)"), "\(none.diagnostics)")
    }
}
