import Foundation
import ReactorApps
import ReactorBus
import ReactorLog
import Synchronization
import Testing

/// Crash recovery with real processes and SIGKILL.
@Suite(.serialized) struct DurabilityTests {
    let directory = NSTemporaryDirectory() + "reactorbus-data-\(UUID().uuidString)"

    func authority(_ endpoints: (actions: String, workers: String, feed: String)? = nil, extra: [String] = []) throws -> NodeProcess {
        try NodeProcess(node: ["authority", "--app", "counter", "--data", directory, "--heartbeat", "0.5",
                               "--actions", endpoints?.actions ?? "tcp://127.0.0.1:*", "--workers", endpoints?.workers ?? "tcp://127.0.0.1:*",
                               "--feed", endpoints?.feed ?? "tcp://127.0.0.1:*"] + extra, name: "authority")
    }

    func worker(_ endpoint: String, delay: String? = nil) throws -> NodeProcess {
        try NodeProcess(node: ["worker", "--app", "counter", "--authority", endpoint, "--heartbeat", "0.5", "--concurrency", "16"] + (delay.map { ["--effect-delay", $0] } ?? []), name: "worker")
    }

    /// Counts acks from the sending tasks.
    final class Acks: Sendable {
        private let value = Mutex((acked: 0, failed: [String]()))
        func ack() { value.withLock { $0.acked += 1 } }
        func fail(_ error: any Error) { value.withLock { $0.failed.append(String(describing: error)) } }
        var acked: Int { value.withLock { $0.acked } }
        var failures: [String] { value.withLock { $0.failed } }
    }

    func waitForCount(_ expected: Int, actions: String, timeout: Duration = .seconds(60)) async throws -> [String: UInt64] {
        let deadline = ContinuousClock.now + timeout
        var stats: [String: UInt64] = [:]
        while ContinuousClock.now < deadline {
            stats = (try? await WireProbe(actions: actions).stats()) ?? stats
            if stats["version"] ?? 0 >= UInt64(expected), stats["open_jobs"] == 0 { return stats }
            try await Task.sleep(for: .milliseconds(100))
        }
        return stats
    }

    @Test func sigkillAtARandomMomentLosesNothingAckedAndAppliesNothingTwice() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var node = try authority()
        let endpoints = try await node.endpoints()
        let workerProcess = try worker(endpoints.workers)
        let total = 5_000
        let killAfter = Int.random(in: 500...3_500)
        let context = try ZMQContext()
        let client = try ActionClient<Counter>(configuration: ActionClientConfiguration(actionsEndpoint: endpoints.actions, timeout: .milliseconds(500), retries: 60, window: 100),
                                               logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        let acks = Acks()
        let sending = Task {
            await withTaskGroup(of: Void.self) { group in
                for lane in 0..<100 {
                    group.addTask {
                        var index = lane
                        while index < total {
                            do {
                                _ = try await client.send(index.isMultiple(of: 2) ? .countUp : .countUpAsync)
                                acks.ack()
                            } catch {
                                acks.fail(error)
                            }
                            index += 100
                        }
                    }
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while acks.acked < killAfter, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let ackedBeforeKill = acks.acked
        node.signal(SIGKILL)
        #expect(await node.waitForExit() != 0)
        #expect(ackedBeforeKill >= killAfter)
        // Same data directory, same endpoints; the client resends its unacked actions with the
        // same (client_id, client_seq), the worker re-registers.
        node = try authority(endpoints)
        _ = try await node.endpoints()
        #expect(node.diagnostics.contains("recovered version"))
        await sending.value
        #expect(acks.failures.isEmpty, "\(acks.failures.prefix(3))")
        #expect(acks.acked == total)
        let stats = try await waitForCount(total, actions: endpoints.actions)
        #expect(stats["version"] == UInt64(total), "\(node.diagnostics)")
        #expect(stats["action_seq"] == UInt64(total))
        #expect(stats["open_jobs"] == 0)
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
        workerProcess.signal(SIGTERM)
        await workerProcess.waitForExit()
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func jobsInFlightAtAKillAreFinishedExactlyOnceAfterTheRestart() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var node = try authority()
        let endpoints = try await node.endpoints()
        let workerProcess = try worker(endpoints.workers, delay: "0.3")
        let sent = try NodeProcess(node: ["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "200", #"{"countUpAsync":{}}"#], name: "send")
        #expect(await sent.waitForExit(timeout: .seconds(60)) == 0, "\(sent.diagnostics)")
        let before = try await WireProbe(actions: endpoints.actions).stats()
        #expect(before["open_jobs"] ?? 0 > 0, "effects should still be running")
        node.signal(SIGKILL)
        await node.waitForExit()
        node = try authority(endpoints)
        _ = try await node.endpoints()
        let stats = try await waitForCount(200, actions: endpoints.actions)
        #expect(stats["version"] == 200, "\(node.diagnostics)")
        #expect(stats["open_jobs"] == 0)
        #expect(stats["mutations_applied"].map { $0 + (before["version"] ?? 0) } == 200)
        workerProcess.signal(SIGTERM)
        await workerProcess.waitForExit()
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    /// Sends `count` countUp actions, waits until the authority reports `snapshots` snapshots
    /// written (they are written off its loop, so an ack does not mean its snapshot is on disk),
    /// then SIGKILLs it (no final snapshot).
    func journalOnly(_ count: Int, extra: [String] = [], snapshots: UInt64 = 0, concurrency: Int = 1) async throws -> (actions: String, workers: String, feed: String) {
        let node = try authority(extra: extra)
        let endpoints = try await node.endpoints()
        let sent = try NodeProcess(node: ["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", String(count), "--concurrency", String(concurrency), #"{"countUp":{}}"#], name: "send")
        #expect(await sent.waitForExit(timeout: .seconds(60)) == 0)
        if snapshots > 0 {
            let deadline = ContinuousClock.now + .seconds(30)
            var written: UInt64 = 0
            while written < snapshots, ContinuousClock.now < deadline {
                written = (try? await WireProbe(actions: endpoints.actions).stats())?["snapshots_written"] ?? written
            }
            #expect(written == snapshots, "\(node.diagnostics)")
        }
        node.signal(SIGKILL)
        await node.waitForExit()
        return endpoints
    }

    func segment() throws -> String {
        let journal = directory + "/journal"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: journal).filter { $0.hasSuffix(".log") }.sorted().first)
        return journal + "/" + name
    }

    func version(after restart: NodeProcess) async throws -> UInt64? {
        let endpoints = try await restart.endpoints()
        return try await WireProbe(actions: endpoints.actions).stats()["version"]
    }

    @Test func aTornLastRecordIsReportedAndCutAndTheNodeServes() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try await journalOnly(50)
        let path = try segment()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.truncate(atOffset: UInt64(size - 3))
        try handle.close()
        let node = try authority()
        #expect(try await version(after: node) == 49)
        #expect(node.diagnostics.contains("journal damaged"))
        let endpoints = try await node.endpoints()
        let more = try NodeProcess(node: ["send", "--app", "counter", "--actions", endpoints.actions, #"{"countUp":{}}"#], name: "send")
        #expect(await more.waitForExit() == 0)
        #expect(try await WireProbe(actions: endpoints.actions).stats()["version"] == 50)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func flippedBytesInTheMiddleKeepEverythingBeforeThem() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try await journalOnly(50)
        let path = try segment()
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let middle = bytes.count / 2
        for offset in middle..<(middle + 4) { bytes[offset] ^= 0xff }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let node = try authority()
        let kept = try #require(try await version(after: node))
        #expect(kept > 10 && kept < 50, "kept \(kept)")
        #expect(node.diagnostics.contains("journal damaged"))
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func aSnapshotPlusAJournalTailRestoresTheSameStateAndVersion() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try await journalOnly(250, extra: ["--snapshot-every", "100"], snapshots: 2)
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: directory + "/snapshots").filter { $0.hasSuffix(".snap") }
        #expect(!snapshots.isEmpty)
        let node = try authority()
        #expect(try await version(after: node) == 250)
        let log = node.diagnostics
        #expect(log.contains("restored snapshot at journal record 200"), "\(log)")
        #expect(log.contains("(50 record(s) replayed)"), "\(log)")
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func sigkillWhileSnapshotsAreBeingWrittenLosesNothingAndAppliesNothingTwice() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A snapshot after every batch: the writer thread is busy nearly all the time, so the
        // kill lands during one or between two; either way the journal holds every acked action.
        let endpoints = try await journalOnly(3_000, extra: ["--snapshot-every", "1"], concurrency: 16)
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: directory + "/snapshots").filter { $0.hasSuffix(".snap") }
        #expect(!snapshots.isEmpty)
        let node = try authority(endpoints)
        let stats = try await waitForCount(3_000, actions: endpoints.actions)
        #expect(stats["version"] == 3_000, "\(node.diagnostics)")
        #expect(stats["action_seq"] == 3_000)
        #expect(node.diagnostics.contains("restored snapshot at journal record"), "\(node.diagnostics)")
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func aGracefulStopWaitsForTheSnapshotInProgressAndWritesTheFinalOne() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var node = try authority(extra: ["--snapshot-every", "1"])
        let endpoints = try await node.endpoints()
        let sent = try NodeProcess(node: ["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "1000", "--concurrency", "16", #"{"countUp":{}}"#], name: "send")
        #expect(await sent.waitForExit(timeout: .seconds(60)) == 0)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
        // The final snapshot covers every record: nothing is replayed.
        node = try authority(endpoints)
        #expect(try await version(after: node) == 1_000)
        #expect(node.diagnostics.contains("(0 record(s) replayed)"), "\(node.diagnostics)")
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }
}
