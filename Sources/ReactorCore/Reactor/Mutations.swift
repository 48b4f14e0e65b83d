/// What `mutate` returns: mutations to apply at once and effects to run elsewhere.
///
/// Sync mutations of an action are applied, in order, before anything else touches the state.
/// Each effect becomes one job; the mutations it emits are applied after the action's sync ones.
///
/// ```swift
/// return [.increase]                          // sync only
/// return Mutations(async: .slowIncrease)      // one effect
/// return .none                                // nothing happens
/// ```
public struct Mutations<Mutation, Effect> {
    /// Applied at once, in this order.
    public var sync: [Mutation]
    /// Each runs as a job on a worker (or a task of the local store).
    public var async: [Effect]
    /// Cancel ids whose open jobs are cancelled (see ``Reactor/cancelID(for:)``), after the
    /// sync mutations are applied and before this action's own effects start.
    public var cancel: [CancelID]

    /// Creates mutations from both parts, and the cancellations.
    public init(sync: [Mutation] = [], async: [Effect] = [], cancel: [CancelID] = []) {
        self.sync = sync
        self.async = async
        self.cancel = cancel
    }

    /// Creates mutations that consist of effects only.
    public init(async effects: Effect...) {
        self.init(sync: [], async: effects)
    }

    /// No mutation, no effect.
    public static var none: Mutations { Mutations(sync: [], async: []) }

    /// Whether there is nothing to apply, nothing to run and nothing to cancel.
    public var isEmpty: Bool { sync.isEmpty && async.isEmpty && cancel.isEmpty }
}

extension Mutations: ExpressibleByArrayLiteral {
    /// Creates sync mutations from an array literal: `return [.increase, .log("up")]`.
    public init(arrayLiteral elements: Mutation...) {
        self.init(sync: elements, async: [])
    }
}

extension Mutations: Sendable where Mutation: Sendable, Effect: Sendable {}
extension Mutations: Equatable where Mutation: Equatable, Effect: Equatable {}
