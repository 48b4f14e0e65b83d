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

    /// Creates mutations from both parts.
    public init(sync: [Mutation] = [], async: [Effect] = []) {
        self.sync = sync
        self.async = async
    }

    /// Creates mutations that consist of effects only.
    public init(async effects: Effect...) {
        self.init(sync: [], async: effects)
    }

    /// No mutation, no effect.
    public static var none: Mutations { Mutations(sync: [], async: []) }

    /// Whether there is nothing to apply and nothing to run.
    public var isEmpty: Bool { sync.isEmpty && async.isEmpty }
}

extension Mutations: ExpressibleByArrayLiteral {
    /// Creates sync mutations from an array literal: `return [.increase, .log("up")]`.
    public init(arrayLiteral elements: Mutation...) {
        self.init(sync: elements, async: [])
    }
}

extension Mutations: Sendable where Mutation: Sendable, Effect: Sendable {}
extension Mutations: Equatable where Mutation: Equatable, Effect: Equatable {}
