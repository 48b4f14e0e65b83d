import Coordination
import Foundation
import TestSupport

/// Runs a blocking coordination call on a thread of its own, so that it does not hold one of
/// the few threads the tests' tasks share.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error> {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: Result(catching: body)) }
    }
}

/// Waits until `condition` holds, checking every 5 ms; false when `timeout` passes first.
func eventually(within timeout: Duration = promptly, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// A candidate's description in these tests.
func candidate(_ name: String) -> LeaderInfo {
    LeaderInfo(name: name, endpoints: ["actions": "tcp://127.0.0.1:7001", "feed": "tcp://127.0.0.1:7002"])
}

/// A loopback address where nothing listens (a port that was free a moment ago).
func deadEndpoint() throws -> String {
    "http://127.0.0.1:\(try LoopbackPort.free(1)[0])"
}
