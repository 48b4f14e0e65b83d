import Foundation
import ReactorApps
@testable import ReactorBus
import ReactorLog
import Testing
import ZeroMQ
import TestSupport

/// `AuthorityNode.promote()`, the call a leader election makes: in one process, over ipc.
@Suite struct AuthorityNodePromotionTests {
    func configuration(_ name: String, data: String, replication: ReplicationConfiguration?) -> AuthorityConfiguration {
        .replicatedCounter("promote-\(name)", data: data, replication: replication)
    }

    @Test func aStandbyPromotedThroughTheAPIServesTheStateItFollowedAndAPrimaryReturnsItsEndpoints() async throws {
        let context = try ZMQContext()
        let primaryData = try TemporaryDirectory()
        let standbyData = try TemporaryDirectory()
        let replicationEndpoint = ipcEndpoint("promote-repl")
        let primaryConfiguration = configuration("primary", data: primaryData.path, replication: ReplicationConfiguration(endpoint: replicationEndpoint, mode: .sync))
        let primary = try AuthorityNode(reactor: Counter(), configuration: primaryConfiguration, logger: Logger(label: "primary", sink: .discard), context: context)
        let primaryEndpoints = try await primary.start()
        #expect(primaryEndpoints.replication == replicationEndpoint)
        #expect(try await primary.promote() == primaryEndpoints, "a primary is promoted already")

        let log = LogCapture()
        let standbyConfiguration = configuration("standby", data: standbyData.path, replication: ReplicationConfiguration(standbyOf: replicationEndpoint))
        let standby = try AuthorityNode(reactor: Counter(), configuration: standbyConfiguration, logger: log.logger("standby"), context: context)
        let following = try await standby.start()
        #expect(following.standbyOf == replicationEndpoint)
        #expect(following.actions.isEmpty && following.workers.isEmpty && following.feed.isEmpty)

        // Sync mode: each ack means the standby has the record.
        let client = try ActionClient<Counter>(configuration: .init(actionsEndpoint: primaryEndpoints.actions, timeout: .seconds(10)), logger: quietLogger, context: context)
        try client.start()
        for expected in UInt64(1)...20 { #expect(try await client.send(.countUp).version == expected) }
        client.close()
        await client.wait()
        primary.stop()
        await primary.wait()

        let promoted = try await standby.promote()
        #expect(promoted.actions == standbyConfiguration.actionsEndpoint)
        #expect(promoted.standbyOf == nil)
        #expect(try await standby.promote() == promoted, "promoting twice returns the same endpoints")
        #expect(log.containing("promoted to primary at journal LSN 20, version 20").count == 1, "\(log.all)")
        let after = try ActionClient<Counter>(configuration: .init(actionsEndpoint: promoted.actions), logger: quietLogger, context: context)
        try after.start()
        #expect(try await after.send(.countUp).version == 21)
        after.close()
        await after.wait()
        standby.stop()
        await standby.wait()
        #expect(standby.failure == nil)
        #expect(context.terminate(timeout: promptly))
    }

    @Test func promotingANodeThatWasNeverStartedOrStoppedAsAStandbyThrows() async throws {
        let context = try ZMQContext()
        let data = try TemporaryDirectory()
        let standbyConfiguration = configuration("idle", data: data.path, replication: ReplicationConfiguration(standbyOf: "ipc:///nonexistent-reactorbus-primary"))
        let node = try AuthorityNode(reactor: Counter(), configuration: standbyConfiguration, logger: Logger(label: "idle", sink: .discard), context: context)
        await #expect(throws: ReplicationError.notPromoted("the node was not started")) { _ = try await node.promote() }
        _ = try await node.start()
        node.stop()
        await node.wait()
        await #expect(throws: ReplicationError.notPromoted("the node was stopped while a standby")) { _ = try await node.promote() }
        #expect(context.terminate(timeout: promptly))
    }
}
