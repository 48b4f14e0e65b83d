import Synchronization

/// Hands the mutations of one running effect to the runtime, numbering them in emit order.
///
/// Every call gets the next emit index (0, 1, 2, ...). The runtime applies a job's mutations in
/// index order, each exactly once, whatever order they arrive in.
public struct Emitter<Mutation: Sendable>: Sendable {
    /// The attempt the emitter numbers mutations for; its copies share it (a class outside the
    /// generic type, so that making one needs no type metadata of the emitter's mutation type).
    private let attempt: EffectAttempt
    private let sink: nonisolated(nonsending) @Sendable (UInt32, Mutation) async -> Void

    /// Creates an emitter that passes each mutation with its index to `sink`.
    public init(sink: nonisolated(nonsending) @escaping @Sendable (_ emitIndex: UInt32, _ mutation: Mutation) async -> Void) {
        self.init(sink: sink, attempt: EffectAttempt())
    }

    /// Creates an emitter that counts its emits in `attempt`.
    init(sink: nonisolated(nonsending) @escaping @Sendable (_ emitIndex: UInt32, _ mutation: Mutation) async -> Void,
         attempt: EffectAttempt) {
        self.attempt = attempt
        self.sink = sink
    }

    /// Emits one mutation.
    nonisolated(nonsending) public func emit(_ mutation: Mutation) async {
        let index = attempt.nextEmit()
        await sink(index, mutation)
    }

    /// Emits one mutation: `await emit(.increase)`.
    nonisolated(nonsending) public func callAsFunction(_ mutation: Mutation) async {
        await emit(mutation)
    }

    /// How many mutations were emitted so far.
    public var count: UInt32 { attempt.emitCount }
}
