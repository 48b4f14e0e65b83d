import Synchronization
import ZeroMQ

/// The handshake of ``AuthorityNode/promote()``: callers on any thread ask, the node's loop
/// takes the request from ``requests`` (a mailbox it polls), promotes, and reports the endpoints
/// it then serves (or why it could not) to every caller.
final class Promotion<Endpoints: Sendable>: Sendable {
    private struct State {
        var result: Result<Endpoints, any Error>?
        var waiters: [CheckedContinuation<Endpoints, any Error>] = []
    }

    /// Where requests arrive; the standby's loop registers it with its poller.
    let requests: Mailbox<Void>
    private let state = Mutex(State())

    init() throws(ZMQError) {
        requests = try Mailbox.forNode()
    }

    /// Asks for promotion and waits for its outcome (at once when it is known).
    func request() async throws -> Endpoints {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Endpoints, any Error>) in
            let known = state.withLock { state -> Result<Endpoints, any Error>? in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(with: known) } else { requests.post(()) }
        }
    }

    /// The outcome: the endpoints served (a primary from the start, or once promoted) or why not.
    func finish(_ result: Result<Endpoints, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Endpoints, any Error>] in
            state.result = result
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}
