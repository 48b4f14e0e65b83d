import Synchronization

/// A flag another thread raises to end a blocking call early (a campaign in progress).
public final class CancellationFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    public init() {}

    /// Asks the calls watching this flag to stop; they notice within their poll interval.
    public func cancel() { raised.store(true, ordering: .releasing) }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { raised.load(ordering: .acquiring) }
}
