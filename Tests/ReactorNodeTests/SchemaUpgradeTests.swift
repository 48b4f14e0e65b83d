import Foundation
import ReactorBus
import ReactorLog
import SchemaFixtures
import Synchronization
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Upgrading a deployment to a release whose app changed shape (schema 1 -> 2): stop the old
/// authority (gracefully, or by SIGKILL under load) and start the new one on the same data
/// directory; it migrates what the old one stored and ends in the exact state.
@Suite(.spawnsProcesses, .serialized) struct SchemaUpgradeTests {
    let directory = NSTemporaryDirectory() + "reactorbus-upgrade-\(UUID().uuidString)"

    /// `schema-fixture ARGS` of `release` (1 or 2).
    func fixture(_ release: Int, _ arguments: [String], name: String) throws -> ChildProcess {
        try ChildProcess.program(executable: ChildProcess.schemaFixture, arguments: arguments, name: name,
                                 environment: ["REACTOR_FIXTURE_RELEASE": String(release)])
    }

    func authority(_ release: Int, _ endpoints: (actions: String, workers: String, feed: String)? = nil) throws -> ChildProcess {
        try fixture(release, ["authority", "--app", "tally", "--data", directory, "--heartbeat", "0.5",
                              "--actions", endpoints?.actions ?? "tcp://127.0.0.1:*", "--workers", endpoints?.workers ?? "tcp://127.0.0.1:*",
                              "--feed", endpoints?.feed ?? "tcp://127.0.0.1:*"], name: "authority-\(release)")
    }

    func worker(_ release: Int, _ endpoint: String) throws -> ChildProcess {
        try fixture(release, ["worker", "--app", "tally", "--authority", endpoint, "--heartbeat", "0.5", "--concurrency", "16"], name: "worker-\(release)")
    }

    /// The line `observe --once --json` of `release` prints.
    func observed(_ release: Int, _ endpoints: (actions: String, workers: String, feed: String)) async throws -> String? {
        let observe = try fixture(release, ["observe", "--app", "tally", "--feed", endpoints.feed, "--actions", endpoints.actions, "--once", "--json"], name: "observe")
        #expect(await observe.waitForExit() == 0, "\(observe.diagnostics)")
        #expect(!observe.diagnostics.contains("ERROR"), "a clean exit logs no error: \(observe.diagnostics)")
        return observe.output.first
    }

    @Test func aGracefulStopThenTheNewReleaseMigratesTheSnapshot() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let old = try authority(1)
        let endpoints = try await old.endpoints()
        let oldWorker = try worker(1, endpoints.workers)
        let context = try ZMQContext()
        let client = try ActionClient<TallyV1>(configuration: ActionClientConfiguration(actionsEndpoint: endpoints.actions, timeout: .seconds(2), retries: 10, window: 50),
                                               logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        for index in 0..<200 { _ = try await client.send(index.isMultiple(of: 2) ? .add(2) : .addLater(1)) }
        let stats = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(30)) { $0["version"] == 200 && $0["open_jobs"] == 0 }
        #expect(stats["action_seq"] == 200)
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
        #expect(try await observed(1, endpoints) == #"{"version":200,"state":{"count":300}}"#)
        oldWorker.signal(SIGTERM)
        #expect(await oldWorker.waitForExit() == 0)
        old.signal(SIGTERM)
        #expect(await old.waitForExit() == 0)

        let new = try authority(2, endpoints)
        _ = try await new.endpoints()
        #expect(new.diagnostics.contains("migrated snapshot"), "\(new.diagnostics)")
        let upgraded = try await observed(2, endpoints)
        #expect(upgraded == #"{"version":200,"state":{"label":"tally","total":300}}"#, "\(upgraded ?? "nothing")")
        new.signal(SIGTERM)
        #expect(await new.waitForExit() == 0)

        // The old release refuses what the new one wrote, naming both versions.
        let downgrade = try authority(1, endpoints)
        #expect(await downgrade.waitForExit() == 65)
        #expect(downgrade.diagnostics.contains("schema version 2, but this build reads schema version 1"), "\(downgrade.diagnostics)")
    }

    @Test func sigkillUnderLoadThenTheNewReleaseMigratesTheJournalTailAndLosesNothing() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var node = try authority(1)
        let endpoints = try await node.endpoints()
        let oldWorker = try worker(1, endpoints.workers)
        let total = 3_000
        let killAfter = Int.random(in: 500...2_000)
        let context = try ZMQContext()
        let client = try ActionClient<TallyV1>(configuration: ActionClientConfiguration(actionsEndpoint: endpoints.actions, timeout: .milliseconds(500), retries: 60, window: 100),
                                               logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        let acks = AckCounter()
        let sending = Task { await acks.send(total, lanes: 50, through: client) { $0.isMultiple(of: 2) ? .add(1) : .addLater(1) } }
        try await acks.wait(untilAcked: killAfter)
        node.signal(SIGKILL)
        #expect(await node.waitForExit() != 0)

        // The new release on the same directory and endpoints; the old worker is refused at its
        // handshake and stops (exit 78), a worker of the new release takes over.
        node = try authority(2, endpoints)
        _ = try await node.endpoints()
        #expect(await oldWorker.waitForExit(timeout: .seconds(30)) == 78, "\(oldWorker.diagnostics)")
        #expect(oldWorker.diagnostics.contains("schema version 2"), "\(oldWorker.diagnostics)")
        let newWorker = try worker(2, endpoints.workers)
        await sending.value
        #expect(acks.failures.isEmpty, "\(acks.failures.prefix(3))")
        #expect(acks.acked == total)
        let stats = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(60)) { $0["version"] ?? 0 >= UInt64(total) && $0["open_jobs"] == 0 }
        #expect(stats["version"] == UInt64(total), "\(node.diagnostics)")
        #expect(stats["action_seq"] == UInt64(total))
        #expect(node.diagnostics.contains("journal record(s) from schema version(s) 1 to 2") || node.diagnostics.contains("migrated snapshot"), "\(node.diagnostics)")
        #expect(try await observed(2, endpoints) == #"{"version":\#(total),"state":{"label":"tally","total":\#(total)}}"#)
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
        newWorker.signal(SIGTERM)
        #expect(await newWorker.waitForExit() == 0)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func clientsAndObserversOfAnotherReleaseAreRefusedNamingBothVersions() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let node = try authority(2)
        let endpoints = try await node.endpoints()
        let send = try fixture(1, ["send", "--app", "tally", "--actions", endpoints.actions, #"{"add":{"_0":1}}"#], name: "send")
        #expect(await send.waitForExit() == 78, "\(send.diagnostics)")
        #expect(send.diagnostics.contains("runs tally schema version 2, this build speaks version 1"), "\(send.diagnostics)")
        for once in [true, false] {
            let observe = try fixture(1, ["observe", "--app", "tally", "--feed", endpoints.feed, "--actions", endpoints.actions] + (once ? ["--once"] : []), name: "observe")
            #expect(await observe.waitForExit() == 78, "\(observe.diagnostics)")
            #expect(observe.output.isEmpty, "nothing of another version is shown")
            #expect(observe.diagnostics.contains("runs tally schema version 2, this build speaks version 1"), "\(observe.diagnostics)")
        }
        // Nothing was applied.
        let stats = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(10)) { _ in true }
        #expect(stats["action_seq"] == 0)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }
}
