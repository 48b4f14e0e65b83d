import Synchronization

/// A standby's view of the leader: a thread that reads the leader key at the election's poll
/// interval and reports every change, until ``stop()``.
public final class LeaderObserver: Sendable {
    private struct State {
        var latest: Leader?
        var hasRead = false
        var failing = false
    }

    /// The state, apart from the value: the thread holds this and not the observer, so that
    /// dropping the observer stops it.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()
    private let thread = Mutex<LoopThread?>(nil)

    init(election: LeaderElection, onChange: @escaping @Sendable (Leader?) -> Void,
         onError: @escaping @Sendable (CoordinationError) -> Void) {
        let shared = shared
        let interval = election.configuration.pollInterval
        let started = LoopThread.start(name: "leader-observer") { thread in
            repeat {
                switch Result(catching: { () throws(CoordinationError) in
                    try election.currentLeader(timeout: min(interval * 4, election.client.requestTimeout))
                }) {
                case .success(let leader):
                    let changed = shared.state.withLock { state in
                        defer {
                            state.latest = leader
                            state.hasRead = true
                            state.failing = false
                        }
                        return !state.hasRead || state.latest != leader
                    }
                    if changed { onChange(leader) }
                case .failure(let error):
                    let first = shared.state.withLock { state in
                        defer { state.failing = true }
                        return !state.failing
                    }
                    if first { onError(error) }
                }
            } while thread.pause(interval)
        }
        thread.withLock { $0 = started }
    }

    deinit { stop() }

    /// The leader as last read (`nil`: none, or not read yet).
    public var latest: Leader? { shared.state.withLock { $0.latest } }

    /// Stops the polling thread and waits for it to end; callbacks are not called afterwards.
    public func stop() {
        let running = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        running?.stop()
    }
}
