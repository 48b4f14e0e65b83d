import Synchronization

/// Hands the mutations of one running effect to the runtime, numbering them in emit order.
///
/// Every call gets the next emit index (0, 1, 2, ...). The runtime applies a job's mutations in
/// index order, each exactly once, whatever order they arrive in.
public struct Emitter<Mutation: Sendable>: Sendable {
    private let counter: EmitCounter
    private let sink: nonisolated(nonsending) @Sendable (UInt32, Mutation) async -> Void

    /// Creates an emitter that passes each mutation with its index to `sink`.
    public init(sink: nonisolated(nonsending) @escaping @Sendable (_ emitIndex: UInt32, _ mutation: Mutation) async -> Void) {
        self.counter = EmitCounter()
        self.sink = sink
    }

    /// Emits one mutation.
    nonisolated(nonsending) public func emit(_ mutation: Mutation) async {
        let index = counter.next()
        await sink(index, mutation)
    }

    /// Emits one mutation: `await emit(.increase)`.
    nonisolated(nonsending) public func callAsFunction(_ mutation: Mutation) async {
        await emit(mutation)
    }

    /// How many mutations were emitted so far.
    public var count: UInt32 { counter.value }
}

/// An emitter's next index, shared by its copies; outside the generic type, so that making one
/// needs no type metadata of the emitter's mutation type.
private final class EmitCounter: Sendable {
    private let storage = Atomic<UInt32>(0)

    func next() -> UInt32 {
        storage.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
    }

    var value: UInt32 { storage.load(ordering: .acquiring) }
}
