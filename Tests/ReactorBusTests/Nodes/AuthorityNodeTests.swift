import Foundation
import ReactorApps
@testable import ReactorBus
import ReactorLog
import Testing
import ZeroMQ
import TestSupport

/// The authority's handle on the node skeleton: `run()` as a service, `start()` once.
@Suite struct AuthorityNodeTests {
    @Test func runServesUntilTheTaskIsCancelledThenStopsGracefullyAndTheNodeCannotStartAgain() async throws {
        let context = try ZMQContext()
        let configuration = AuthorityConfiguration.onIPC(app: "counter", name: "authority-run")
        let node = try AuthorityNode(reactor: Counter(), configuration: configuration, logger: Logger(label: "test", sink: .discard), context: context)
        let service = Task { try await node.run() }
        // Stopped on every way out, also when an expectation below throws.
        defer { service.cancel() }

        let client = try ActionClient<Counter>(configuration: .init(actionsEndpoint: configuration.actionsEndpoint), logger: quietLogger, context: context)
        try client.start()
        let ack = try await client.send(.countUp)
        #expect(ack.version == 1)
        client.close()
        await client.wait()

        service.cancel()
        try await service.value
        #expect(node.failure == nil)
        #expect(node.metrics[.actionsAccepted] == 1)
        #expect(node.metrics.version == 1)
        await #expect(throws: NodeError.alreadyStarted("authority")) { _ = try await node.start() }
        #expect(context.terminate(timeout: promptly))
    }
}
