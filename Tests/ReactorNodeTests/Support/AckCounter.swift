import ReactorBus
import ReactorCore
import Synchronization

/// Acks and failures of actions sent from many tasks at once (while a test kills and restarts
/// the authority under them).
final class AckCounter: Sendable {
    private let value = Mutex((acked: 0, failed: [String]()))
    func ack() { value.withLock { $0.acked += 1 } }
    func fail(_ error: any Error) { value.withLock { $0.failed.append(String(describing: error)) } }
    var acked: Int { value.withLock { $0.acked } }
    var failures: [String] { value.withLock { $0.failed } }

    /// Waits until at least `count` actions were acked (at most `timeout`), polling every 5 ms.
    func wait(untilAcked count: Int, within timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while acked < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    /// Sends actions 0..<total through `client` from `lanes` tasks (action `index` by lane
    /// `index % lanes`, in order within a lane), counting each outcome here; returns when all ended.
    func send<R: Reactor>(_ total: Int, lanes: Int, through client: ActionClient<R>, _ action: @escaping @Sendable (Int) -> R.Action) async {
        await withTaskGroup(of: Void.self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var index = lane
                    while index < total {
                        do {
                            _ = try await client.send(action(index))
                            self.ack()
                        } catch {
                            self.fail(error)
                        }
                        index += lanes
                    }
                }
            }
        }
    }
}
