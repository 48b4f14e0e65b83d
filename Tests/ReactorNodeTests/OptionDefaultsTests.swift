import Foundation
import ReactorBus
import Testing
import TestSupport
import TestTraits

/// The CLI's option defaults are the configuration types' defaults, not copies of them.
@Suite(.spawnsProcesses) struct OptionDefaultsTests {
    /// The help line of `--name`, from `reactor-node COMMAND --help`.
    private func helpLine(_ command: String, _ name: String) async throws -> String {
        let node = try ChildProcess.node([command, "--help"])
        #expect(await node.waitForExit() == 0)
        return node.output.first { $0.contains("--\(name) ") } ?? "(no --\(name) in the help)"
    }

    @Test func authorityHelpShowsTheConfigurationDefaults() async throws {
        let configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        let persistence = PersistenceConfiguration(directory: "/tmp")
        let expected: [(String, String)] = [
            ("fsync", "\(persistence.fsync)"),
            ("snapshot-every", "\(persistence.snapshotEveryRecords)"),
            ("snapshot-replica-above", persistence.replicaSnapshotsAbove.map(String.init) ?? "off"),
            ("max-worker-capacity", "\(configuration.maxWorkerCapacity)"),
            ("max-in-flight", "\(configuration.maxInFlightPerClient)"),
            ("max-clients", "\(configuration.clientLedger.maxClients)"),
            ("remembered-acks", "\(configuration.clientLedger.rememberedAcks)"),
            ("feed-queue-bytes", "\(configuration.feedQueueBytes)"),
            ("client-queue-bytes", "\(configuration.clientQueueBytes)"),
            ("max-message-bytes", "\(configuration.maxMessageBytes)"),
            ("job-timeout", "\(configuration.jobTimeout.components.seconds)"),
            ("heartbeat", "\(configuration.heartbeatInterval.components.seconds)"),
        ]
        for (name, value) in expected {
            let line = try await helpLine("authority", name)
            #expect(line.contains("(default \(value),"), "--\(name): \(line)")
        }
    }

    @Test func workerAndSendHelpShowTheConfigurationDefaults() async throws {
        let worker = WorkerConfiguration(authorityEndpoint: "", appName: "counter", name: "w")
        let client = ActionClientConfiguration(actionsEndpoint: "", clientID: "c")
        let expected: [(String, String, String)] = [
            ("worker", "concurrency", "\(worker.concurrency)"),
            ("worker", "attempts", "\(worker.retry.maxAttempts)"),
            ("worker", "max-message-bytes", "\(worker.maxMessageBytes)"),
            ("send", "timeout", "\(client.timeout.components.seconds)"),
            ("send", "connect-timeout", "\(client.connectTimeout.components.seconds)"),
            ("send", "busy-timeout", "\(client.busyBackoff.giveUpAfter.components.seconds)"),
        ]
        for (command, name, value) in expected {
            let line = try await helpLine(command, name)
            #expect(line.contains("(default \(value),"), "\(command) --\(name): \(line)")
        }
    }
}
