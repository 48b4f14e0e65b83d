/// Runs effects: the slow side of a reactor (I/O, computation), on a worker or in the local store.
///
/// `run` emits zero or more mutations over time and returns when the effect is done. A thrown
/// error makes the runtime retry (see ``RetryPolicy``); after the last attempt the reactor's
/// `failed(effect:error:)` mutations are applied instead.
///
/// Execution is at-least-once: a retried or re-dispatched effect runs again from the start, and
/// the runtime drops the mutations it had already applied by their emit index. An effect should
/// therefore emit the same mutations in the same order each time it runs.
public protocol EffectHandler<Effect, Mutation>: Sendable {
    /// The effects this handler runs.
    associatedtype Effect: Codable & Sendable
    /// The mutations it emits.
    associatedtype Mutation: Codable & Sendable

    /// Runs one effect, emitting its mutations in order through `emit`.
    func run(_ effect: Effect, emit: Emitter<Mutation>) async throws
}
