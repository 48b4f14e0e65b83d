import Synchronization

/// How many times `stop()` was called on a worker: once means drain, twice means stop now.
///
/// Written by any thread calling `stop()`, read by the loop thread once per turn.
final class WorkerStopRequest: Sendable {
    private let count = Atomic<Int>(0)

    /// Records one more stop request and returns how many there have been.
    func request() -> Int {
        count.add(1, ordering: .acquiringAndReleasing).newValue
    }

    /// Whether a second stop asked to cancel everything at once.
    var isImmediate: Bool { count.load(ordering: .acquiring) >= 2 }
}
