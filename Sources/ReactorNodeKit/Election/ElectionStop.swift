import Coordination
import Synchronization

/// SIGINT/SIGTERM for an elected authority: ends a campaign in progress and stops the node that
/// runs now (a standby, or the primary), whichever phase the signal finds.
final class ElectionStop: Sendable {
    /// Raised with the stop: a campaign watching it ends early.
    let cancellation = CancellationFlag()
    private let reaction = Mutex<(@Sendable () -> Void)?>(nil)

    /// Stops: raises the flag and runs the current reaction.
    func set() {
        cancellation.cancel()
        reaction.withLock { $0 }?()
    }

    /// Whether a stop was asked for.
    var isSet: Bool { cancellation.isCancelled }

    /// Makes `stop` the reaction to a stop from now on; runs it at once if one was asked for.
    func whenSet(_ stop: @escaping @Sendable () -> Void) {
        reaction.withLock { $0 = stop }
        if isSet { stop() }
    }
}
