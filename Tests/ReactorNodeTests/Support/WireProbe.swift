import ReactorApps
import ReactorBus
import ReactorLog
import ZeroMQ

/// A small in-test client of a running authority process, over the real protocol.
struct WireProbe {
    let actions: String

    func stats() async throws -> [String: UInt64] {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        var configuration = ActionClientConfiguration(actionsEndpoint: actions, timeout: .seconds(2), retries: 1)
        configuration.connectTimeout = .seconds(4)
        let client = try ActionClient<Counter>(configuration: configuration, logger: Logger(label: "probe", sink: .discard), context: context)
        try client.start()
        defer { client.close() }
        return try await client.stats()
    }

    /// The authority's counters once `condition` holds for them, or the last ones read when
    /// `timeout` passes (a read that fails counts as "not yet").
    func stats(within timeout: Duration, until condition: ([String: UInt64]) -> Bool) async throws -> [String: UInt64] {
        let deadline = ContinuousClock.now + timeout
        var stats: [String: UInt64] = [:]
        while ContinuousClock.now < deadline {
            stats = (try? await self.stats()) ?? stats
            if condition(stats) { return stats }
            try await Task.sleep(for: .milliseconds(50))
        }
        return stats
    }
}
