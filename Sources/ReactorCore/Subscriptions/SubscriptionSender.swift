import Synchronization

/// Hands the events of one running subscription to the runtime, numbering them in order.
///
/// Every call gets the next event index, starting after the last applied event the handler was
/// told about; the runtime applies a run's events in index order, each exactly once.
public struct SubscriptionSender<Action: Sendable>: Sendable {
    private let counter: Counter
    private let sink: @Sendable (UInt64, Action) async -> Void

    /// Creates a sender whose first event gets index `firstIndex`.
    public init(firstIndex: UInt64, sink: @escaping @Sendable (_ index: UInt64, _ action: Action) async -> Void) {
        self.counter = Counter(firstIndex)
        self.sink = sink
    }

    /// Sends one event: `await send(.tick(n))`.
    public func callAsFunction(_ action: Action) async {
        let index = counter.next()
        await sink(index, action)
    }

    /// The index the next event will get.
    public var nextIndex: UInt64 { counter.value }

    private final class Counter: Sendable {
        private let storage: Mutex<UInt64>

        init(_ first: UInt64) { storage = Mutex(first) }

        func next() -> UInt64 {
            storage.withLock { value in
                defer { value &+= 1 }
                return value
            }
        }

        var value: UInt64 { storage.withLock { $0 } }
    }
}
