/// A reactor made of child reactors (``Part``s), each reused unchanged through a ``Scope``.
///
/// The defaults delegate to the parts: `mutate` and `reduce` (a composition with no actions or
/// mutations of its own writes neither), lanes, kinds, the failure hook, cancellation (ids
/// `NAME.id`, cancel-in-flight, the cancel hook), subscriptions (the parts' in order, ids and
/// kinds `NAME.id`, `NAME.kind`), `transform(action:)`,
/// initial actions and mutations (the parts' in order) and projections (each part's whole state
/// when it is `Equatable`, then its own projections). A parent with actions of its own writes
/// `mutate` and `reduce` and calls ``mutateParts(state:action:)`` and
/// ``reduceParts(state:mutation:)`` first:
///
/// ```swift
/// func reduce(state: inout State, mutation: Mutation) {
///     if reduceParts(state: &state, mutation: mutation) {
///         state.summary = "\(state.cart.items.count) items"   // reacting to a child's mutation
///         return
///     }
///     switch mutation { ... }                                 // the parent's own
/// }
/// ```
///
/// Reacting in `reduce` keeps the reaction deterministic and replayable: it happens in the same
/// step, at the same version, as the child's mutation that caused it.
///
/// `parts` is read on every action, mutation and effect: return a stored array.
public protocol ComposedReactor: Reactor {
    /// The children, in the order they are asked.
    var parts: [Part<Self>] { get }
}

extension ComposedReactor {
    /// The mutations of the first part whose action `action` is, or `nil` for a parent's own.
    public func mutateParts(state: State, action: Action) -> Mutations<Mutation, Effect>? {
        for part in parts {
            if let mutations = part.mutate(state, action) { return mutations }
        }
        return nil
    }

    /// Reduces `mutation` with the part it belongs to; `false` for a parent's own mutation.
    public func reduceParts(state: inout State, mutation: Mutation) -> Bool {
        for part in parts where part.reduce(&state, mutation) { return true }
        return false
    }

    /// The actions the part of `action` transforms it into (its `transform(action:)`, lifted);
    /// `nil` for a parent's own action.
    public func transformParts(action: Action) -> [Action]? {
        for part in parts {
            if let actions = part.transform(action) { return actions }
        }
        return nil
    }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        mutateParts(state: state, action: action) ?? .none
    }

    public func reduce(state: inout State, mutation: Mutation) {
        _ = reduceParts(state: &state, mutation: mutation)
    }

    public func lane(for effect: Effect) -> String? {
        for part in parts {
            if let lane = part.lane(effect) { return lane }
        }
        return nil
    }

    public func kind(of effect: Effect) -> String {
        for part in parts {
            if let kind = part.kind(effect) { return kind }
        }
        return EffectKind.caseName(of: effect)
    }

    public func failed(effect: Effect, error: EffectFailure) -> [Mutation] {
        for part in parts {
            if let mutations = part.failed(effect, error) { return mutations }
        }
        return []
    }

    public func cancelID(for effect: Effect) -> CancelID? {
        for part in parts {
            if let id = part.cancelID(effect) { return id }
        }
        return nil
    }

    public func cancelsInFlight(_ effect: Effect) -> Bool {
        for part in parts {
            if let cancels = part.cancelsInFlight(effect) { return cancels }
        }
        return false
    }

    public func cancelled(effect: Effect) -> [Mutation] {
        for part in parts {
            if let mutations = part.cancelled(effect) { return mutations }
        }
        return []
    }

    /// The subscriptions the parts want, in part order. A parent with subscriptions of its own
    /// returns them together with `subscriptionsOfParts(state:)`.
    public func subscriptionsOfParts(state: State) -> [Subscription] {
        parts.flatMap { $0.subscriptions(state) }
    }

    public func subscriptions(state: State) -> [Subscription] {
        subscriptionsOfParts(state: state)
    }

    public func subscriptionID(of subscription: Subscription) -> String {
        for part in parts {
            if let id = part.subscriptionID(subscription) { return id }
        }
        return String(describing: subscription)
    }

    public func subscriptionKind(of subscription: Subscription) -> String {
        for part in parts {
            if let kind = part.subscriptionKind(subscription) { return kind }
        }
        return EffectKind.caseName(of: subscription)
    }

    public func transform(action: Action) -> [Action] {
        transformParts(action: action) ?? [action]
    }

    public var initialActions: [Action] { parts.flatMap(\.initialActions) }

    public var initialMutations: [Mutation] { parts.flatMap(\.initialMutations) }

    public var projections: [AnyProjection<State>] { parts.flatMap(\.projections) }
}
