/// A child reactor placed inside a parent: its state at a key path of the parent's state, its
/// actions, mutations and effects as cases of the parent's (``Embedding``).
///
/// Every method lifts the child's own, unchanged: `mutate`, `reduce`, lanes, kinds, the failure
/// hook, cancellation (ids, cancel-in-flight, the cancel hook), subscriptions, `transform(action:)`,
/// initial actions and mutations, projections, and (with ``effects(_:)`` and
/// ``subscriptions(_:)``) its effect and subscription handlers. Each returns `nil` (or `false`) for a parent value that
/// is not this child's, so a parent delegates in one line per child, or lists its scopes as
/// ``Part``s of a ``ComposedReactor`` that does it all.
///
/// Names: the child's effect kinds become `NAME.kind` and its lanes `NAME.lane`, so two
/// children never share a lane by accident, and a worker serves one child by announcing
/// the kind pattern `NAME.*` (`reactor-node worker --part NAME`). Its cancel ids become
/// `NAME.id`, so a child cancels its own jobs only; its subscriptions' ids and kinds become
/// `NAME.id` and `NAME.kind` likewise. Its projections become
/// `NAME.projection`, and with an `Equatable` child state the scope offers its whole part as
/// the projection `NAME` (``projection``).
public struct Scope<Parent: Reactor, Child: Reactor>: Sendable {
    /// The scope's name: the prefix of the child's kinds, lanes and projections.
    public let name: String
    /// The child, whose functions are reused as they are.
    public let child: Child
    /// Where the child's state lives in the parent's.
    public let state: WritableKeyPath<Parent.State, Child.State> & Sendable
    /// The child's actions inside the parent's.
    public let action: Embedding<Parent.Action, Child.Action>
    /// The child's mutations inside the parent's.
    public let mutation: Embedding<Parent.Mutation, Child.Mutation>
    /// The child's effects inside the parent's.
    public let effect: Embedding<Parent.Effect, Child.Effect>
    /// The child's subscriptions inside the parent's.
    public let subscription: Embedding<Parent.Subscription, Child.Subscription>

    /// Places `child`, which has subscriptions, in a parent under `name`: its subscriptions
    /// become the parent's (ids `NAME.id`, kinds `NAME.kind`), and their events its actions.
    public init(_ name: String, _ child: Child, state: WritableKeyPath<Parent.State, Child.State> & Sendable,
                action: Embedding<Parent.Action, Child.Action>, mutation: Embedding<Parent.Mutation, Child.Mutation>,
                effect: Embedding<Parent.Effect, Child.Effect>, subscription: Embedding<Parent.Subscription, Child.Subscription>) {
        self.name = name
        self.child = child
        self.state = state
        self.action = action
        self.mutation = mutation
        self.effect = effect
        self.subscription = subscription
    }

    /// Places `child` in a parent under `name`. (A child with subscriptions needs the
    /// initialiser that also says where they go, so they are never dropped unnoticed.)
    public init(_ name: String, _ child: Child, state: WritableKeyPath<Parent.State, Child.State> & Sendable,
                action: Embedding<Parent.Action, Child.Action>, mutation: Embedding<Parent.Mutation, Child.Mutation>,
                effect: Embedding<Parent.Effect, Child.Effect>) where Child.Subscription == NoSubscription {
        self.init(name, child, state: state, action: action, mutation: mutation, effect: effect,
                  subscription: Embedding({ (none: NoSubscription) -> Parent.Subscription in switch none {} }, extract: { _ in nil }))
    }

    /// The child's `mutate` for one of its actions, lifted; `nil` for another action.
    public func mutate(state: Parent.State, action: Parent.Action) -> Mutations<Parent.Mutation, Parent.Effect>? {
        guard let own = self.action.extract(action) else { return nil }
        return lift(child.mutate(state: state[keyPath: self.state], action: own))
    }

    /// The child's `reduce` of one of its mutations on its part of `state`; `false` (nothing
    /// changed) for another mutation.
    public func reduce(state: inout Parent.State, mutation: Parent.Mutation) -> Bool {
        guard let own = self.mutation.extract(mutation) else { return false }
        child.reduce(state: &state[keyPath: self.state], mutation: own)
        return true
    }

    /// The child's lane of one of its effects, as `NAME.lane`: `.some(nil)` for an effect of the
    /// child in no lane, `nil` for another effect.
    public func lane(for effect: Parent.Effect) -> String?? {
        guard let own = self.effect.extract(effect) else { return nil }
        return .some(child.lane(for: own).map { "\(name).\($0)" })
    }

    /// The child's kind of one of its effects, as `NAME.kind`; `nil` for another effect.
    public func kind(of effect: Parent.Effect) -> String? {
        self.effect.extract(effect).map { "\(name).\(child.kind(of: $0))" }
    }

    /// The child's failure hook for one of its effects, lifted; `nil` for another effect.
    public func failed(effect: Parent.Effect, error: EffectFailure) -> [Parent.Mutation]? {
        self.effect.extract(effect).map { child.failed(effect: $0, error: error).map(mutation.embed) }
    }

    /// The child's cancel id of one of its effects, as `NAME.id`: `.some(nil)` for an effect of
    /// the child that cannot be cancelled, `nil` for another effect.
    public func cancelID(for effect: Parent.Effect) -> CancelID?? {
        guard let own = self.effect.extract(effect) else { return nil }
        return .some(child.cancelID(for: own).map(scoped))
    }

    /// Whether one of the child's effects cancels the open jobs with its id; `nil` for another
    /// effect.
    public func cancelsInFlight(_ effect: Parent.Effect) -> Bool? {
        self.effect.extract(effect).map(child.cancelsInFlight)
    }

    /// The child's cancel hook for one of its effects, lifted; `nil` for another effect.
    public func cancelled(effect: Parent.Effect) -> [Parent.Mutation]? {
        self.effect.extract(effect).map { child.cancelled(effect: $0).map(mutation.embed) }
    }

    /// The subscriptions the child wants in its part of `state`, lifted.
    public func subscriptions(state: Parent.State) -> [Parent.Subscription] {
        child.subscriptions(state: state[keyPath: self.state]).map(subscription.embed)
    }

    /// The child's id of one of its subscriptions, as `NAME.id`; `nil` for another subscription.
    public func subscriptionID(of subscription: Parent.Subscription) -> String? {
        self.subscription.extract(subscription).map { "\(name).\(child.subscriptionID(of: $0))" }
    }

    /// The child's kind of one of its subscriptions, as `NAME.kind`; `nil` for another one.
    public func subscriptionKind(of subscription: Parent.Subscription) -> String? {
        self.subscription.extract(subscription).map { "\(name).\(child.subscriptionKind(of: $0))" }
    }

    /// The child's `transform(action:)` of one of its actions, lifted; `nil` for another action.
    public func transform(action: Parent.Action) -> [Parent.Action]? {
        self.action.extract(action).map { child.transform(action: $0).map(self.action.embed) }
    }

    /// The child's initial actions, lifted.
    public var initialActions: [Parent.Action] { child.initialActions.map(action.embed) }

    /// The child's initial mutations, lifted.
    public var initialMutations: [Parent.Mutation] { child.initialMutations.map(mutation.embed) }

    /// The child's projections, of the parent's state, named `NAME.projection`.
    public var projections: [AnyProjection<Parent.State>] { child.projections.map { $0.pulledBack(state, prefix: name) } }

    /// Lifts what the child's `mutate` returned into the parent's types.
    public func lift(_ mutations: Mutations<Child.Mutation, Child.Effect>) -> Mutations<Parent.Mutation, Parent.Effect> {
        Mutations(sync: mutations.sync.map(mutation.embed), async: mutations.async.map(effect.embed),
                  cancel: mutations.cancel.map(scoped))
    }

    /// A child's cancel id in the parent: `NAME.id`.
    private func scoped(_ id: CancelID) -> CancelID { CancelID("\(name).\(id.rawValue)") }

    /// The child's effect handler as a handler of the parent's effects of this child: it runs
    /// them with `handler` and lifts what they emit.
    public func effects<H: EffectHandler>(_ handler: H) -> PartEffects<Parent.Effect, Parent.Mutation>
        where H.Effect == Child.Effect, H.Mutation == Child.Mutation {
        PartEffects(name: name, handler: handler, embed: mutation.embed, extract: effect.extract)
    }
}

extension Scope {
    /// The child's subscription handler as a handler of the parent's subscriptions of this
    /// child: it runs them with `handler` and lifts the actions they send.
    public func subscriptions<H: SubscriptionHandler>(_ handler: H) -> PartSubscriptions<Parent.Subscription, Parent.Action>
        where H.Subscription == Child.Subscription, H.Action == Child.Action {
        PartSubscriptions(name: name, handler: handler, embed: action.embed, extract: subscription.extract)
    }
}

extension Scope where Child.State: Equatable {
    /// The child's whole part of the state, as the projection named like the scope: what an
    /// observer follows to see one child only.
    public var projection: Projection<Parent.State, Child.State> {
        let state = self.state
        return Projection(name) { $0[keyPath: state] }
    }
}
