import ReactorBus
import ReactorCore
import ReactorLog
import ZeroMQ

/// An in-process client of one app's authority: sends typed actions, reads the typed state.
final class AppClient<R: Reactor> {
    let context: ZMQContext
    let client: ActionClient<R>

    init(actions: String) throws {
        context = try ZMQContext()
        var configuration = ActionClientConfiguration(actionsEndpoint: actions, timeout: .seconds(2), retries: 10, window: 8)
        configuration.connectTimeout = .seconds(10)
        client = try ActionClient<R>(configuration: configuration, logger: Logger(label: "app-client", sink: .discard), context: context)
        try client.start()
    }

    func send(_ action: R.Action) async throws -> ActionAck { try await client.send(action) }

    func state() async throws -> Snapshot<R.State> { try await client.snapshot() }

    /// The state once `condition` holds, or the last one read after `timeout`.
    func state(within timeout: Duration = .seconds(20), until condition: (R.State) -> Bool) async throws -> Snapshot<R.State> {
        let deadline = ContinuousClock.now + timeout
        var last = try await state()
        while ContinuousClock.now < deadline, !condition(last.state) {
            try await Task.sleep(for: .milliseconds(50))
            last = try await state()
        }
        return last
    }

    func close() async {
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
    }
}
