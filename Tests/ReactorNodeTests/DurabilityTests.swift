import Foundation
import ReactorApps
import ReactorBus
import ReactorLog
import Synchronization
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Crash recovery with real processes and SIGKILL.
@Suite(.spawnsProcesses, .serialized) struct DurabilityTests {
    let directory = NSTemporaryDirectory() + "reactorbus-data-\(UUID().uuidString)"

    func authority(_ endpoints: (actions: String, workers: String, feed: String)? = nil, extra: [String] = []) throws -> ChildProcess {
        try ChildProcess.node(["authority", "--app", "counter", "--data", directory, "--heartbeat", "0.5",
                               "--actions", endpoints?.actions ?? "tcp://127.0.0.1:*", "--workers", endpoints?.workers ?? "tcp://127.0.0.1:*",
                               "--feed", endpoints?.feed ?? "tcp://127.0.0.1:*"] + extra, name: "authority")
    }

    func worker(_ endpoint: String, delay: String? = nil) throws -> ChildProcess {
        try ChildProcess.node(["worker", "--app", "counter", "--authority", endpoint, "--heartbeat", "0.5", "--concurrency", "16"] + (delay.map { ["--effect-delay", $0] } ?? []), name: "worker")
    }

    func waitForCount(_ expected: Int, actions: String, timeout: Duration = .seconds(60)) async throws -> [String: UInt64] {
        try await WireProbe(actions: actions).stats(within: timeout) { $0["version"] ?? 0 >= UInt64(expected) && $0["open_jobs"] == 0 }
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
        let acks = AckCounter()
        let sending = Task { await acks.send(total, lanes: 100, through: client) { $0.isMultiple(of: 2) ? .countUp : .countUpAsync } }
        try await acks.wait(untilAcked: killAfter)
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
        let sent = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "200", #"{"countUpAsync":{}}"#], name: "send")
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
        // Replayed mutations count as applied by this process too: each of the 200 once, none twice.
        #expect(stats["mutations_applied"] == 200)
        workerProcess.signal(SIGTERM)
        await workerProcess.waitForExit()
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    /// Sends `count` countUp actions, waits until the authority reports `snapshots` snapshots
    /// written (they are written off its loop, so an ack does not mean its snapshot is on disk),
    /// then SIGKILLs it (no final snapshot).
    func journalOnly(_ count: Int, concurrency: Int = 1, extra: [String] = [], snapshots: UInt64 = 0) async throws -> (actions: String, workers: String, feed: String) {
        let node = try authority(extra: extra)
        let endpoints = try await node.endpoints()
        let sent = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", String(count), "--concurrency", String(concurrency), #"{"countUp":{}}"#], name: "send")
        #expect(await sent.waitForExit(timeout: .seconds(60)) == 0)
        if snapshots > 0 {
            let written = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(30)) { $0["snapshots_written"] ?? 0 >= snapshots }["snapshots_written"]
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

    func version(after restart: ChildProcess) async throws -> UInt64? {
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
        #expect(node.diagnostics.contains("journal: cut a torn tail"), "\(node.diagnostics)")
        #expect(node.diagnostics.contains("after LSN 49; 0 intact record(s) after it"), "\(node.diagnostics)")
        let endpoints = try await node.endpoints()
        let more = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, #"{"countUp":{}}"#], name: "send")
        #expect(await more.waitForExit() == 0)
        #expect(try await WireProbe(actions: endpoints.actions).stats()["version"] == 50)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    /// Every file under the data directory's journal, by name, with its bytes.
    func journalFiles() throws -> [String: Data] {
        let journal = directory + "/journal"
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: journal) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: journal + "/" + name))
        }
        return files
    }

    /// The frames of a segment of the `counter` app, read independently of the journal code:
    /// (offset, payload length) in order; a frame's LSN is its index + 1 in the first segment.
    func frames(of bytes: [UInt8]) -> [(offset: Int, length: Int)] {
        var frames: [(offset: Int, length: Int)] = []
        var offset = 14 + "counter".utf8.count
        while offset + 16 <= bytes.count {
            let length = bytes[offset..<(offset + 4)].reversed().reduce(0) { $0 << 8 | Int($1) }
            guard offset + 16 + length <= bytes.count else { break }
            frames.append((offset, length))
            offset += 16 + length
        }
        return frames
    }

    /// The issue's scenario: acknowledged actions, then one flipped byte in the middle of the
    /// journal. The authority must refuse to serve and leave the files alone; `--repair truncate`
    /// then serves exactly the records before the damage and says what was lost.
    @Test func aFlippedByteInTheMiddleStopsTheAuthorityUntilTheLossIsAccepted() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let total = 2_000
        let first = try await journalOnly(total, concurrency: 16, extra: ["--snapshot-interval", "3600"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/snapshots").filter { $0.hasSuffix(".snap") } == [])
        let path = try segment()
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let layout = frames(of: bytes)
        #expect(layout.count == total)
        // The frame holding the journal's middle byte: flip its last payload byte.
        let index = try #require(layout.lastIndex { $0.offset <= bytes.count / 2 })
        let damaged = layout[index]
        bytes[damaged.offset + 16 + damaged.length - 1] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let lastIntact = index  // LSN of the frame before it; each countUp is one record
        let after = total - lastIntact - 1
        let before = try journalFiles()

        // Refused: exit 65, nothing bound (no endpoints line), the journal untouched.
        let refused = try authority(first)
        #expect(await refused.waitForExit(timeout: .seconds(30)) == 65, "\(refused.diagnostics)")
        #expect(refused.output.isEmpty, "\(refused.output)")
        let message = refused.diagnostics
        #expect(message.contains("journal damaged before its end: \(path) at offset \(damaged.offset): checksum mismatch"), "\(message)")
        #expect(message.contains("after LSN \(lastIntact); \(after) intact record(s) after it (up to LSN \(total))"), "\(message)")
        #expect(message.contains("--repair truncate"), "\(message)")
        #expect(!message.contains("recovered version"), "\(message)")
        #expect(try journalFiles() == before)
        // A repair policy other than truncate (or refuse) is a usage error, before anything is opened.
        let invalid = try authority(first, extra: ["--repair", "bogus"])
        #expect(await invalid.waitForExit() == 64, "\(invalid.diagnostics)")
        #expect(try journalFiles() == before)

        // Accepting the loss: serves the records before the damage and logs what was lost.
        let repaired = try authority(first, extra: ["--repair", "truncate"])
        let endpoints = try await repaired.endpoints()
        #expect(endpoints.actions == first.actions && endpoints.feed == first.feed)
        let stats = try await WireProbe(actions: endpoints.actions).stats()
        #expect(stats["version"] == UInt64(lastIntact), "\(repaired.diagnostics)")
        #expect(stats["action_seq"] == UInt64(lastIntact))
        let log = repaired.diagnostics
        #expect(log.contains("cut by the truncate repair policy: lost \(total - lastIntact) record(s) (LSN \(lastIntact + 1)...\(total))"), "\(log)")
        let files = try journalFiles()
        #expect(files.keys.sorted() == [URL(fileURLWithPath: path).lastPathComponent, URL(fileURLWithPath: path).lastPathComponent + ".cut-at-\(damaged.offset).corrupt"])
        #expect(files[URL(fileURLWithPath: path).lastPathComponent] == Data(bytes[..<damaged.offset]))
        repaired.signal(SIGTERM)
        #expect(await repaired.waitForExit() == 0)

        // The cut journal opens cleanly afterwards, without the repair option.
        let again = try authority(first)
        #expect(try await version(after: again) == UInt64(lastIntact))
        #expect(!again.diagnostics.contains("journal damaged"), "\(again.diagnostics)")
        again.signal(SIGTERM)
        #expect(await again.waitForExit() == 0)
    }

    /// A journal that ends before the newest snapshot (its end lost) must not be continued as it
    /// is: new records would reuse LSNs the snapshot covers and be skipped at the next restart.
    @Test func aJournalEndingBeforeTheNewestSnapshotIsRefusedOrContinuedAfterIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let node = try authority()
        let endpoints = try await node.endpoints()
        let sent = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "30", #"{"countUp":{}}"#], name: "send")
        #expect(await sent.waitForExit(timeout: .seconds(60)) == 0)
        node.signal(SIGTERM)  // a graceful stop writes a snapshot through LSN 30
        #expect(await node.waitForExit() == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/snapshots").filter { $0.hasSuffix(".snap") }
                == ["snapshot-00000000000000000030.snap"])
        let path = try segment()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.truncate(atOffset: UInt64(size - 3))  // record 30 torn: the journal ends at 29
        try handle.close()
        let refused = try authority(endpoints)
        #expect(await refused.waitForExit(timeout: .seconds(30)) == 65, "\(refused.diagnostics)")
        #expect(refused.output.isEmpty, "\(refused.output)")
        #expect(refused.diagnostics.contains("covers the journal through LSN 30, but the journal ends at LSN 29"), "\(refused.diagnostics)")

        // The truncate policy continues the journal after the snapshot: the next action is LSN 31,
        // and it is replayed (not skipped) after a crash.
        let repaired = try authority(endpoints, extra: ["--repair", "truncate"])
        #expect(try await version(after: repaired) == 30, "\(repaired.diagnostics)")
        #expect(repaired.diagnostics.contains("journal ends at LSN 29, before the newest snapshot (LSN 30)"), "\(repaired.diagnostics)")
        let more = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, #"{"countUp":{}}"#], name: "send")
        #expect(await more.waitForExit() == 0)
        repaired.signal(SIGKILL)
        await repaired.waitForExit()
        let again = try authority(endpoints)
        #expect(try await version(after: again) == 31, "\(again.diagnostics)")
        #expect(again.diagnostics.contains("(1 record(s) replayed)"), "\(again.diagnostics)")
        again.signal(SIGTERM)
        #expect(await again.waitForExit() == 0)
    }

    @Test func aSnapshotPlusAJournalTailRestoresTheSameStateAndVersion() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Snapshots while the first 200 go in; then 50 more with none, so a tail always follows
        // the newest snapshot, whenever the writer thread got to it.
        _ = try await journalOnly(200, extra: ["--snapshot-every", "100"], snapshots: 2)
        _ = try await journalOnly(50, extra: ["--snapshot-every", "1000000", "--snapshot-interval", "3600"])
        let newest = try #require(try FileManager.default.contentsOfDirectory(atPath: directory + "/snapshots")
            .filter { $0.hasSuffix(".snap") }
            .compactMap { UInt64($0.dropFirst("snapshot-".count).dropLast(".snap".count)) }.max())
        #expect((100...200).contains(newest))
        let node = try authority()
        #expect(try await version(after: node) == 250)
        let log = node.diagnostics
        #expect(log.contains("restored snapshot at journal record \(newest)"), "\(log)")
        #expect(log.contains("(\(250 - newest) record(s) replayed)"), "\(log)")
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func snapshotsWrittenByAReplicaRestoreTheSameStateAfterASigkill() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A replica from the first snapshot on: that one is the loop's checkpoint, the next the replica's.
        let replica = ["--snapshot-every", "100", "--snapshot-replica-above", "0"]
        let endpoints = try await journalOnly(250, concurrency: 4, extra: replica, snapshots: 2)
        // Restarted with a replica again: it starts from the snapshot recovered and writes the next one.
        let node = try authority(endpoints, extra: replica)
        _ = try await waitForCount(250, actions: endpoints.actions)
        #expect(node.diagnostics.contains("snapshots are written from a replica of the state: the one recovered has"), "\(node.diagnostics)")
        let sent = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "150", "--concurrency", "4", #"{"countUp":{}}"#], name: "send")
        #expect(await sent.waitForExit(timeout: .seconds(60)) == 0)
        let written = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(30)) { $0["snapshots_written"] ?? 0 >= 1 }
        #expect(written["snapshots_written"] == 1, "\(node.diagnostics)")
        node.signal(SIGKILL)
        await node.waitForExit()
        let newest = try #require(try FileManager.default.contentsOfDirectory(atPath: directory + "/snapshots")
            .filter { $0.hasSuffix(".snap") }
            .compactMap { UInt64($0.dropFirst("snapshot-".count).dropLast(".snap".count)) }.max())
        #expect(newest > 250, "the replica's snapshot covers records after the restart")
        let again = try authority(endpoints)
        #expect(try await version(after: again) == 400, "\(again.diagnostics)")
        #expect(again.diagnostics.contains("restored snapshot at journal record \(newest)"), "\(again.diagnostics)")
        #expect(again.diagnostics.contains("(\(400 - newest) record(s) replayed)"), "\(again.diagnostics)")
        again.signal(SIGTERM)
        #expect(await again.waitForExit() == 0)
    }

    @Test func sigkillWhileSnapshotsAreBeingWrittenLosesNothingAndAppliesNothingTwice() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A snapshot after every batch: the writer thread is busy nearly all the time, so the
        // kill lands during one or between two; either way the journal holds every acked action.
        let endpoints = try await journalOnly(3_000, concurrency: 16, extra: ["--snapshot-every", "1"])
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
        let sent = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "1000", "--concurrency", "16", #"{"countUp":{}}"#], name: "send")
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
