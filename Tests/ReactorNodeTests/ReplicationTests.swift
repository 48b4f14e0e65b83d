import Foundation
import ReactorApps
import ReactorBus
import ReactorLog
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Standby authorities with real processes: journal streaming, sync and async acks, promotion.
@Suite(.spawnsProcesses) struct ReplicationTests {
    let root = NSTemporaryDirectory() + "reactorbus-replication-\(UUID().uuidString)"

    /// A primary on its own data directory, serving standbys on an ephemeral port.
    func primary(_ extra: [String] = [], replication: String = "tcp://127.0.0.1:*") async throws -> (process: ChildProcess, endpoints: [String: String]) {
        let process = try ChildProcess.node(["authority", "--app", "counter", "--data", root + "/primary", "--heartbeat", "0.3",
                                             "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*",
                                             "--feed", "tcp://127.0.0.1:*", "--replication", replication] + extra, name: "primary")
        return (process, try await Self.endpointsLine(process))
    }

    /// A standby of `replication` on `data` (relative to the test's directory).
    func standby(of replication: String, data: String = "standby", extra: [String] = []) throws -> ChildProcess {
        try ChildProcess.node(["authority", "--app", "counter", "--data", root + "/" + data, "--heartbeat", "0.3", "--standby", replication] + extra + [
                               "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"], name: data)
    }

    static func endpointsLine(_ process: ChildProcess, timeout: Duration = .seconds(20)) async throws -> [String: String] {
        let line = try #require(await process.waitForLine(timeout: timeout) { $0.hasPrefix("{\"actions\"") }, "no endpoints line: \(process.diagnostics)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
    }

    /// `send` of `count` countUp actions; returns its exit status.
    func send(_ count: Int, to actions: String, clientID: String? = nil, concurrency: Int = 32) async throws -> Int32? {
        let process = try ChildProcess.node(["send", "--app", "counter", "--actions", actions, "--repeat", String(count), "--concurrency", String(concurrency)]
                                            + (clientID.map { ["--client-id", $0] } ?? []) + [#"{"countUp":{}}"#], name: "send")
        let status = await process.waitForExit(timeout: .seconds(120))
        #expect(status == 0, "\(process.diagnostics)")
        return status
    }

    /// `journal dump --json` of a data directory (read-only, beside a running node).
    func dump(_ data: String) async throws -> [String] {
        let process = try ChildProcess.node(["journal", "dump", "--app", "counter", "--data", root + "/" + data, "--json"], name: "dump")
        #expect(await process.waitForExit(timeout: .seconds(60)) == 0, "\(process.diagnostics)")
        return process.output
    }

    /// The primary's stats once `condition` holds (or the last read after `timeout`).
    func primaryStats(_ actions: String, within timeout: Duration = .seconds(60), until condition: @escaping ([String: UInt64]) -> Bool) async throws -> [String: UInt64] {
        try await WireProbe(actions: actions).stats(within: timeout, until: condition)
    }

    /// Promotes `standby` with SIGUSR1; returns the endpoints it then serves.
    func promote(_ standby: ChildProcess) async throws -> [String: String] {
        standby.signal(SIGUSR1)
        return try await Self.endpointsLine(standby)
    }

    /// Sends `total` countUp through one client (`window` unacked, `lanes` callers) and SIGKILLs
    /// the primary once `after` are acked; returns how many were acked in all (what is still
    /// unanswered then fails: an ack that could not come).
    func killUnderLoad(_ primaryProcess: ChildProcess, actions: String, context: ZMQContext, total: Int, window: Int, lanes: Int, after: Int) async throws -> Int {
        let client = try ActionClient<Counter>(configuration: ActionClientConfiguration(actionsEndpoint: actions, timeout: .seconds(2), retries: 0, window: window),
                                               logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        let acks = AckCounter()
        let sending = Task { await acks.send(total, lanes: lanes, through: client) { _ in .countUp } }
        try await acks.wait(untilAcked: after)
        primaryProcess.signal(SIGKILL)
        #expect(await primaryProcess.waitForExit() != 0)
        let ackedAtKill = acks.acked
        client.close()
        await sending.value
        await client.wait()
        #expect(acks.acked >= ackedAtKill && acks.acked >= after && acks.acked < total)
        return acks.acked
    }

    func stop(_ processes: ChildProcess...) async {
        for process in processes where process.isRunning { process.signal(SIGTERM) }
        for process in processes { await process.waitForExit(timeout: .seconds(10)) }
    }

    @Test func aStandbyStartedEmptyCatchesUpStreamsUnderLoadAndIsPromotedWithTheSameJournalStateAndLedger() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (primaryProcess, primaryEndpoints) = try await primary()
        let actions = try #require(primaryEndpoints["actions"])
        let replication = try #require(primaryEndpoints["replication"])
        // History before the standby exists: 5 actions of a known client, then 295 more.
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let original = try await sendAsClient("ledger", count: 5, to: actions, context: context)
        _ = try await send(295, to: actions)
        let standbyProcess = try standby(of: replication)
        #expect(await standbyProcess.waitForLine { $0.hasPrefix("{\"standby_of\"") } == #"{"standby_of":"\#(replication)"}"#, "\(standbyProcess.diagnostics)")
        let caughtUp = try await primaryStats(actions) { $0["standbys"] == 1 && $0["replication_lag_records"] == 0 }
        #expect(caughtUp["standbys"] == 1 && caughtUp["replication_lag_records"] == 0, "\(standbyProcess.diagnostics)")
        // Streaming under load.
        _ = try await send(2_000, to: actions, concurrency: 64)
        let streamed = try await primaryStats(actions) { $0["version"] == 2_300 && $0["replication_lag_records"] == 0 }
        #expect(streamed["version"] == 2_300)
        #expect(streamed["replication_lag_records"] == 0)
        #expect(streamed["replication_records_sent"] ?? 0 >= 2_300)
        #expect(streamed["replication_bytes_sent"] ?? 0 > 0)
        let primaryDump = try await dump("primary")
        #expect(primaryDump.count == 2_300)
        #expect(try await dump("standby") == primaryDump)
        // Failover: the primary goes, the standby is promoted and serves the same state.
        await stop(primaryProcess)
        let promoted = try await promote(standbyProcess)
        #expect(standbyProcess.diagnostics.contains("promoted to primary at journal LSN 2300, version 2300"), "\(standbyProcess.diagnostics)")
        let promotedActions = try #require(promoted["actions"])
        let state = try await WireProbe(actions: promotedActions).stats()
        #expect(state["version"] == 2_300)
        #expect(state["action_seq"] == 2_300)
        // The client ledger came along: resending (ledger, 1...5) gets the original acks, applies nothing.
        let resent = try await sendAsClient("ledger", count: 5, to: promotedActions, context: context)
        #expect(resent == original)
        let after = try await WireProbe(actions: promotedActions).stats()
        #expect(after["version"] == 2_300)
        #expect(after["actions_duplicate"] == 5)
        // And it takes new actions.
        _ = try await send(10, to: promotedActions)
        #expect(try await WireProbe(actions: promotedActions).stats()["version"] == 2_310)
        await stop(standbyProcess)
        #expect(standbyProcess.reap() == 0)
    }

    @Test func syncModeLosesNoAckedActionWhenThePrimaryIsKilledAndTheStandbyPromoted() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (primaryProcess, primaryEndpoints) = try await primary(["--replication-mode", "sync", "--metrics", "127.0.0.1:0"])
        let metricsPort = try #require(primaryEndpoints["metrics"]?.split(separator: ":").last.flatMap { UInt16($0) })
        let actions = try #require(primaryEndpoints["actions"])
        let replication = try #require(primaryEndpoints["replication"])
        // Without a standby, sync mode holds the acks.
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let held = try ActionClient<Counter>(configuration: ActionClientConfiguration(actionsEndpoint: actions, timeout: .seconds(30), retries: 0),
                                             logger: Logger(label: "held", sink: .discard), context: context)
        try held.start()
        let heldAck = Task { try await held.send(.countUp) }
        // (Stats requests wait like acks, so the gauges are read from the metrics endpoint.)
        let before = try await Self.metrics(port: metricsPort) { $0["reactorbus_action_seq"] == 1 }
        #expect(before["reactorbus_action_seq"] == 1)
        #expect(before["reactorbus_standbys"] == 0)
        #expect(before["reactorbus_acks_total"] == 0, "an ack left with no standby following")
        #expect(primaryProcess.diagnostics.contains("sync replication: no standby is following; acks are held until one is"))
        let standbyProcess = try standby(of: replication)
        let first = try await heldAck.value
        #expect(first.actionSeq == 1)
        held.close()
        await held.wait()
        // Under load, the primary is killed; every acked action must be in the promoted standby.
        let total = 20_000
        let acked = try await killUnderLoad(primaryProcess, actions: actions, context: context, total: total, window: 100, lanes: 64, after: 1_500)
        let promoted = try await promote(standbyProcess)
        let state = try await WireProbe(actions: try #require(promoted["actions"])).stats()
        let count = try #require(state["version"])
        // Every ack received (plus the first) is in the promoted state; the rest were sent, maybe applied.
        #expect(count >= UInt64(acked) + 1, "acked \(acked) + 1, promoted standby has \(count)\n\(standbyProcess.diagnostics)")
        #expect(count <= UInt64(total) + 1)
        #expect(state["action_seq"] == count)
        await stop(standbyProcess)
    }

    /// Under `async` a failover may lose acked actions, but only ones the standby did not have
    /// yet: the promoted state is exactly the old primary's journal up to the standby's last
    /// record, and the acked actions missing from it are among the records after that (what
    /// `replication_lag_records` counted at the moment of the failure).
    @Test func asyncModeLosesAtMostTheRecordsTheStandbyLackedWhenThePrimaryIsKilled() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (primaryProcess, primaryEndpoints) = try await primary(["--replication-mode", "async"])
        let actions = try #require(primaryEndpoints["actions"])
        let replication = try #require(primaryEndpoints["replication"])
        // A standby that syncs every commit falls behind a primary that does not: acked
        // actions it lacks are then what a failover loses.
        let standbyProcess = try standby(of: replication, extra: ["--fsync", "always"])
        _ = try await primaryStats(actions, within: .seconds(20)) { $0["standbys"] == 1 }
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let acked = UInt64(try await killUnderLoad(primaryProcess, actions: actions, context: context, total: 40_000, window: 1_000, lanes: 256, after: 5_000))

        // What each side has on disk at the failure (the standby's before its promotion).
        let primaryRecords = try await dump("primary")
        let standbyRecords = try await dump("standby")
        #expect(!standbyRecords.isEmpty && standbyRecords.count <= primaryRecords.count)
        #expect(Array(primaryRecords.prefix(standbyRecords.count)) == standbyRecords, "the standby's journal is a prefix of the primary's")
        let accepted = { (records: [String]) in UInt64(records.count { $0.contains("accepted") }) }
        // Every acked action was journaled by the primary (acks leave after its commit).
        #expect(accepted(primaryRecords) >= acked)

        let promoted = try await promote(standbyProcess)
        let state = try await WireProbe(actions: try #require(promoted["actions"])).stats()
        let count = try #require(state["version"])
        #expect(count == accepted(standbyRecords), "the promoted state is the standby's journal, exactly")
        let lacked = accepted(primaryRecords) - accepted(standbyRecords)
        let lost = acked > count ? acked - count : 0
        #expect(lost <= lacked, "lost \(lost) acked actions, the standby lacked \(lacked) records")
        print("async failover: \(acked) acked, \(count) in the promoted state, \(lost) acked lost, standby lacked \(lacked)")
        await stop(standbyProcess)
    }

    @Test func aClientWithBothEndpointsGetsEveryActionAppliedExactlyOnceAcrossASyncFailover() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (primaryProcess, primaryEndpoints) = try await primary(["--replication-mode", "sync"])
        let actions = try #require(primaryEndpoints["actions"])
        // The standby's actions endpoint must be known before it binds it: the client lists it.
        let ports = try LoopbackPort.free(3)
        let standbyActions = "tcp://127.0.0.1:\(ports[0])"
        let standbyProcess = try ChildProcess.node(["authority", "--app", "counter", "--data", root + "/standby", "--heartbeat", "0.3",
                                                    "--standby", try #require(primaryEndpoints["replication"]), "--actions", standbyActions,
                                                    "--workers", "tcp://127.0.0.1:\(ports[1])", "--feed", "tcp://127.0.0.1:\(ports[2])"], name: "standby")
        _ = try await primaryStats(actions, within: .seconds(20)) { $0["standbys"] == 1 }
        let total = 30_000
        let sender = try ChildProcess.node(["send", "--app", "counter", "--actions", actions + "," + standbyActions, "--client-id", "failover",
                                            "--repeat", String(total), "--concurrency", "64", "--timeout", "1", "--connect-timeout", "30",
                                            #"{"countUp":{}}"#], name: "send")
        let loaded = try await primaryStats(actions, within: .seconds(30)) { $0["acks"] ?? 0 >= 1_000 }
        #expect(loaded["acks"] ?? 0 >= 1_000)
        primaryProcess.signal(SIGKILL)
        #expect(await primaryProcess.waitForExit() != 0)
        let promoted = try await promote(standbyProcess)
        #expect(promoted["actions"] == standbyActions)
        // The client moves to the promoted standby and resends what was not acked, same client_seq.
        #expect(await sender.waitForExit(timeout: .seconds(120)) == 0, "\(sender.diagnostics)")
        let summary = try #require(sender.output.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(summary["acked"] as? Int == total)
        #expect(sender.logTail(200).contains("connected to \(standbyActions); resent"), "the kill landed after the load: \(sender.diagnostics)")
        let state = try await WireProbe(actions: standbyActions).stats()
        #expect(state["version"] == UInt64(total), "every action applied exactly once: \(sender.diagnostics)\n\(standbyProcess.diagnostics)")
        #expect(state["action_seq"] == UInt64(total))
        await stop(standbyProcess)
    }

    @Test func asyncModeReportsItsLagAndARestartedStandbyCatchesUpUnderLoad() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (primaryProcess, primaryEndpoints) = try await primary()
        let actions = try #require(primaryEndpoints["actions"])
        let replication = try #require(primaryEndpoints["replication"])
        // The standby writes snapshots of its own as it goes, and restarts from them.
        var standbyProcess = try standby(of: replication, extra: ["--snapshot-every", "700"])
        _ = try await primaryStats(actions, within: .seconds(20)) { $0["standbys"] == 1 }
        _ = try await send(500, to: actions)
        _ = try await primaryStats(actions) { $0["replication_lag_records"] == 0 && $0["version"] == 500 }
        // The standby dies: async acks go on, and the lag counts what a failover to it would lose.
        standbyProcess.signal(SIGKILL)
        await standbyProcess.waitForExit()
        _ = try await send(1_000, to: actions)
        let lagging = try await primaryStats(actions, within: .seconds(30)) { $0["standbys"] == 0 }
        #expect(lagging["standbys"] == 0, "\(primaryProcess.diagnostics)")
        #expect(lagging["version"] == 1_500)
        #expect(lagging["replication_lag_records"] == 1_000)
        // Restarted under load on the same directory: it says from where, and catches up.
        let load = Task { try await send(2_000, to: actions, concurrency: 64) }
        standbyProcess = try standby(of: replication, extra: ["--snapshot-every", "700"])
        #expect(try await load.value == 0)
        let caughtUp = try await primaryStats(actions) { $0["standbys"] == 1 && $0["replication_lag_records"] == 0 && $0["version"] == 3_500 }
        #expect(caughtUp["replication_lag_records"] == 0 && caughtUp["version"] == 3_500, "\(standbyProcess.diagnostics)")
        #expect(primaryProcess.diagnostics.contains("follows from LSN 500"), "\(primaryProcess.diagnostics)")
        #expect(try await dump("standby") == (try await dump("primary")))
        await stop(standbyProcess, primaryProcess)
    }

    /// A primary whose journal starts after LSN 300: 300 actions, a stop (its final snapshot at
    /// 300), its journal files deleted, and a restart under the truncate repair policy. Its
    /// history is in the snapshot only, which a standby must fetch.
    func primaryWithCompactedHistory() async throws -> (process: ChildProcess, endpoints: [String: String]) {
        let (first, endpoints) = try await primary()
        _ = try await send(300, to: try #require(endpoints["actions"]))
        await stop(first)
        #expect(first.reap() == 0)
        let journal = root + "/primary/journal"
        for file in try FileManager.default.contentsOfDirectory(atPath: journal) { try FileManager.default.removeItem(atPath: journal + "/" + file) }
        return try await primary(["--repair", "truncate"])
    }

    @Test func aStandbyBehindACompactedJournalGetsTheSnapshotInChunksThenTheRecordsAfterIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (primaryProcess, primaryEndpoints) = try await primaryWithCompactedHistory()
        let actions = try #require(primaryEndpoints["actions"])
        _ = try await send(50, to: actions)
        let standbyProcess = try standby(of: try #require(primaryEndpoints["replication"]))
        let caughtUp = try await primaryStats(actions) { $0["standbys"] == 1 && $0["replication_lag_records"] == 0 }
        #expect(caughtUp["replication_lag_records"] == 0 && caughtUp["version"] == 350, "\(standbyProcess.diagnostics)")
        #expect(caughtUp["replication_bytes_sent"] ?? 0 > 0)
        await stop(primaryProcess)
        let promoted = try await promote(standbyProcess)
        #expect(standbyProcess.diagnostics.contains("installed the primary's snapshot at LSN 300: version 300"), "\(standbyProcess.diagnostics)")
        let state = try await WireProbe(actions: try #require(promoted["actions"])).stats()
        #expect(state["version"] == 350)
        #expect(state["action_seq"] == 350)
        await stop(standbyProcess)
        #expect(standbyProcess.reap() == 0)
    }

    /// The newest snapshot's LSN in `data`'s snapshot directory, if any.
    func newestSnapshot(in data: String) -> UInt64? {
        ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + data + "/snapshots")) ?? [])
            .filter { $0.hasSuffix(".snap") }
            .compactMap { UInt64($0.dropFirst("snapshot-".count).dropLast(".snap".count)) }.max()
    }

    @Test func aStandbysReplicaStartsFromTheInstalledSnapshotAndItsSnapshotsRestoreTheStateAfterASigkill() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        // The standby installs the primary's snapshot at LSN 300.
        let (primaryProcess, primaryEndpoints) = try await primaryWithCompactedHistory()
        let actions = try #require(primaryEndpoints["actions"])
        let standbyProcess = try standby(of: try #require(primaryEndpoints["replication"]), extra: ["--snapshot-every", "100", "--snapshot-replica-above", "0"])
        _ = try await primaryStats(actions) { $0["standbys"] == 1 && $0["replication_lag_records"] == 0 }
        #expect(standbyProcess.diagnostics.contains("snapshots are written from a replica of the state: the one installed has"), "\(standbyProcess.diagnostics)")
        // 250 more: the replica, not the standby's loop, writes the snapshots after LSN 300.
        _ = try await send(250, to: actions, concurrency: 4)
        let streamed = try await primaryStats(actions) { $0["version"] == 550 && $0["replication_lag_records"] == 0 }
        #expect(streamed["version"] == 550 && streamed["replication_lag_records"] == 0, "\(standbyProcess.diagnostics)")
        _ = await eventually(within: .seconds(30)) { newestSnapshot(in: "standby") ?? 0 >= 400 }
        let newest = try #require(newestSnapshot(in: "standby"))
        #expect(newest >= 400, "\(standbyProcess.diagnostics)")
        #expect(!standbyProcess.diagnostics.contains("snapshot replica stopped"), "\(standbyProcess.diagnostics)")
        standbyProcess.signal(SIGKILL)
        await standbyProcess.waitForExit()
        await stop(primaryProcess)
        // The standby's data as a primary: the replica's newest snapshot, then the journal's tail.
        let restarted = try ChildProcess.node(["authority", "--app", "counter", "--data", root + "/standby", "--actions", "tcp://127.0.0.1:*",
                                               "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"], name: "restarted")
        let state = try await WireProbe(actions: try #require(try await Self.endpointsLine(restarted)["actions"])).stats()
        #expect(state["version"] == 550 && state["action_seq"] == 550, "\(restarted.diagnostics)")
        #expect(restarted.diagnostics.contains("restored snapshot at journal record \(newest)"), "\(restarted.diagnostics)")
        #expect(restarted.diagnostics.contains("(\(550 - newest) record(s) replayed)"), "\(restarted.diagnostics)")
        await stop(restarted)
        #expect(restarted.reap() == 0)
    }

    @Test func aStandbyThatLosesItsPrimaryKeepsItsDataAndFollowsItAgainAfterItsRestart() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        var (primaryProcess, primaryEndpoints) = try await primary()
        let replication = try #require(primaryEndpoints["replication"])
        _ = try await send(200, to: try #require(primaryEndpoints["actions"]))
        let standbyProcess = try standby(of: replication)
        _ = try await primaryStats(try #require(primaryEndpoints["actions"])) { $0["standbys"] == 1 && $0["replication_lag_records"] == 0 }
        primaryProcess.signal(SIGKILL)
        await primaryProcess.waitForExit()
        // The standby notices (3 heartbeats of silence), keeps its data, binds nothing, retries.
        let deadline = ContinuousClock.now + .seconds(15)
        while !standbyProcess.logTail(50).contains("lost the primary"), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(standbyProcess.logTail(50).contains("lost the primary \(replication)"), "\(standbyProcess.diagnostics)")
        #expect(standbyProcess.isRunning)
        #expect(!standbyProcess.output.contains { $0.hasPrefix("{\"actions\"") })
        // The same primary comes back on the same replication endpoint; the standby follows it again.
        (primaryProcess, primaryEndpoints) = try await primary(replication: replication)
        let actions = try #require(primaryEndpoints["actions"])
        _ = try await send(300, to: actions)
        let again = try await primaryStats(actions) { $0["standbys"] == 1 && $0["replication_lag_records"] == 0 && $0["version"] == 500 }
        #expect(again["standbys"] == 1 && again["replication_lag_records"] == 0 && again["version"] == 500, "\(standbyProcess.diagnostics)")
        #expect(try await dump("standby") == (try await dump("primary")))
        await stop(standbyProcess, primaryProcess)
    }

    /// With CURVE the standby connects with the authority's own key pair (the one its clients
    /// know), which the primary admits on the replication socket even under an allowlist that
    /// does not list it; a standby with another key pair never follows.
    @Test func aStandbyFollowsACurvePrimaryWithTheAuthoritysKeyAndAStrangerNeverDoes() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let keys = root + "/keys"
        for folder in ["allow/actions", "allow/workers", "allow/feed"] {
            try FileManager.default.createDirectory(atPath: keys + "/" + folder, withIntermediateDirectories: true)
        }
        for name in ["authority", "client", "stranger"] {
            #expect(await (try ChildProcess.node(["keygen", "--out", keys + "/" + name])).waitForExit() == 0)
        }
        try FileManager.default.copyItem(atPath: keys + "/client.pub", toPath: keys + "/allow/actions/client.pub")
        let curve = ["--curve-secret-key", keys + "/authority.key", "--allow-keys", keys + "/allow"]
        let (primaryProcess, primaryEndpoints) = try await primary(curve + ["--replication-mode", "sync"])
        let replication = try #require(primaryEndpoints["replication"])
        let stranger = try standby(of: replication, data: "stranger", extra: ["--curve-secret-key", keys + "/stranger.key"])
        let standbyProcess = try standby(of: replication, extra: curve)
        // Sync acks need the standby: every one of these proves it followed over CURVE.
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", try #require(primaryEndpoints["actions"]), "--repeat", "50",
                                          "--curve-server-key", keys + "/authority.pub", "--curve-secret-key", keys + "/client.key",
                                          #"{"countUp":{}}"#], name: "send")
        #expect(await send.waitForExit(timeout: .seconds(60)) == 0, "\(send.diagnostics)\(standbyProcess.diagnostics)")
        #expect(send.output.last?.contains(#""acked":50"#) == true)
        // The stranger (its hello goes out every 0.3 s heartbeat) never got through: its key
        // pair is not the authority's, so the CURVE handshake fails.
        #expect(primaryProcess.diagnostics.components(separatedBy: "replication: standby").count == 2, "\(primaryProcess.diagnostics)")
        #expect(!stranger.diagnostics.contains("following the primary"), "\(stranger.diagnostics)")
        await stop(stranger, primaryProcess)
        let promoted = try await promote(standbyProcess)
        let after = try ChildProcess.node(["send", "--app", "counter", "--actions", try #require(promoted["actions"]),
                                           "--curve-server-key", keys + "/authority.pub", "--curve-secret-key", keys + "/client.key",
                                           #"{"countUp":{}}"#], name: "after")
        #expect(await after.waitForExit(timeout: .seconds(30)) == 0, "\(after.diagnostics)")
        #expect(after.output.last?.contains(#""last_version":51"#) == true, "\(after.output)")
        await stop(standbyProcess)
    }

    @Test func aStandbyOfAnotherAppIsRefusedWithAClearError() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (primaryProcess, primaryEndpoints) = try await primary()
        let replication = try #require(primaryEndpoints["replication"])
        let wrong = try ChildProcess.node(["authority", "--app", "primes", "--data", root + "/wrong", "--heartbeat", "0.3", "--standby", replication], name: "wrong")
        let status = await wrong.waitForExit(timeout: .seconds(20))
        #expect(status != nil && status != 0)
        #expect(wrong.diagnostics.contains("the primary refused this standby (wrong_app): the standby runs app 'primes', this primary runs 'counter'"), "\(wrong.diagnostics)")
        await stop(primaryProcess)
    }

    @Test func aStandbyNeedsADataDirectory() async throws {
        let process = try ChildProcess.node(["authority", "--app", "counter", "--standby", "tcp://127.0.0.1:9"], name: "no-data")
        #expect(await process.waitForExit(timeout: .seconds(10)) == 64)
        #expect(process.diagnostics.contains("--standby needs --data DIR"), "\(process.diagnostics)")
    }

    /// The unlabelled-by-kind samples of a node's `/metrics` once `condition` holds for them (or
    /// the last read after `timeout`), by family name.
    static func metrics(port: UInt16, within timeout: Duration = .seconds(10), until condition: ([String: Double]) -> Bool) async throws -> [String: Double] {
        let deadline = ContinuousClock.now + timeout
        var samples: [String: Double] = [:]
        while ContinuousClock.now < deadline {
            if let answer = RawHTTPClient.exchange(port: port, "GET /metrics HTTP/1.0\r\n\r\n") {
                samples = [:]
                for line in answer.body.split(separator: "\n") where !line.hasPrefix("#") {
                    guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
                    let name = line[..<space].split(separator: "{").first.map(String.init) ?? ""
                    samples[name] = value
                }
                if condition(samples) { return samples }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return samples
    }

    /// Sends `count` countUp actions as client `clientID` (client_seq 1...count); returns their acks.
    func sendAsClient(_ clientID: String, count: Int, to actions: String, context: ZMQContext) async throws -> [ActionAck] {
        let client = try ActionClient<Counter>(configuration: ActionClientConfiguration(actionsEndpoint: actions, clientID: clientID, timeout: .seconds(5), retries: 2),
                                               logger: Logger(label: clientID, sink: .discard), context: context)
        try client.start()
        defer { client.close() }
        var acks: [ActionAck] = []
        for _ in 0..<count { acks.append(try await client.send(.countUp)) }
        return acks
    }
}
