import Synchronization

/// Why a node stopped on its own rather than because it was asked to: set once, by the node's
/// thread, read by whoever waits for the node (the CLI turns it into a non-zero exit code).
final class NodeFailure: Sendable {
    private let value = Mutex<(any Error)?>(nil)

    /// Records `error` unless an earlier one was recorded: the first cause is the one to report.
    func record(_ error: any Error) {
        value.withLock { if $0 == nil { $0 = error } }
    }

    /// The recorded error, or `nil` if the node stopped only when asked.
    var error: (any Error)? { value.withLock { $0 } }
}
