import Foundation
import Testing
import TestSupport
import TestTraits

/// `--snapshot-dir`: snapshots kept outside the data directory (another filesystem than the
/// journal's), locked like it, and the only place recovery reads them from.
@Suite(.spawnsProcesses) struct SnapshotDirectoryTests {
    let root = NSTemporaryDirectory() + "reactorbus-snapdir-\(UUID().uuidString)"
    var data: String { root + "/data" }
    var snapshots: String { root + "/elsewhere/snapshots" }

    func authority(_ extra: [String] = [], name: String = "authority") throws -> ChildProcess {
        try ChildProcess.node(["authority", "--app", "counter", "--data", data, "--snapshot-dir", snapshots, "--actions", "tcp://127.0.0.1:*",
                               "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"] + extra, name: name)
    }

    func snapshotFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".snap") }
    }

    @Test func snapshotsGoToTheirOwnDirectoryAndARestartRecoversFromIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        var node = try authority()
        var endpoints = try await node.endpoints()
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "300", #"{"countUp":{}}"#], name: "send")
        #expect(await send.waitForExit(timeout: .seconds(60)) == 0, "\(send.diagnostics)")
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0, "\(node.diagnostics)")
        #expect(snapshotFiles(snapshots).count == 1, "\(node.diagnostics)")
        #expect(snapshotFiles(data + "/snapshots").isEmpty)

        // A second authority on another data directory may not write into the same snapshots.
        node = try authority()
        endpoints = try await node.endpoints()
        let intruder = try ChildProcess.node(["authority", "--app", "counter", "--data", root + "/other", "--snapshot-dir", snapshots,
                                              "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"], name: "intruder")
        #expect(await intruder.waitForExit(timeout: .seconds(15)) == 69, "\(intruder.diagnostics)")
        #expect(intruder.diagnostics.contains("is locked by another authority"))
        // The restart restored the snapshot: version 300 with nothing left to replay.
        #expect(node.diagnostics.contains("restored snapshot at journal record 300"), "\(node.diagnostics)")
        let stats = try await WireProbe(actions: endpoints.actions).stats()
        #expect(stats["version"] == 300)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func aSnapshotDirectoryWithoutADataDirectoryIsAUsageError() async throws {
        let node = try ChildProcess.node(["authority", "--app", "counter", "--snapshot-dir", "/tmp/x", "--actions", "tcp://127.0.0.1:*"], name: "authority")
        #expect(await node.waitForExit(timeout: .seconds(10)) == 64)
        #expect(node.diagnostics.contains("--snapshot-dir needs --data"))
    }

    @Test func aReplicaThresholdThatIsNotBytesOrOffIsAUsageError() async throws {
        for value in ["lots", "-1", "16MiB"] {
            let node = try ChildProcess.node(["authority", "--app", "counter", "--data", NSTemporaryDirectory() + "reactorbus-unused-\(UUID().uuidString)",
                                              "--snapshot-replica-above", value, "--actions", "tcp://127.0.0.1:*"], name: "authority")
            #expect(await node.waitForExit(timeout: .seconds(10)) == 64, "\(value)")
            #expect(node.diagnostics.contains("authority: '--snapshot-replica-above \(value)' must be a number of bytes (0 = always) or off"), "\(node.diagnostics)")
        }
    }
}
