/// A ``Scope`` with its child's type erased, so that a ``ComposedReactor`` lists children of
/// different types.
public struct Part<Parent: Reactor>: Sendable {
    /// The scope's name.
    public let name: String
    let mutate: @Sendable (Parent.State, Parent.Action) -> Mutations<Parent.Mutation, Parent.Effect>?
    let reduce: @Sendable (inout Parent.State, Parent.Mutation) -> Bool
    let lane: @Sendable (Parent.Effect) -> String??
    let kind: @Sendable (Parent.Effect) -> String?
    let failed: @Sendable (Parent.Effect, EffectFailure) -> [Parent.Mutation]?
    let transform: @Sendable (Parent.Action) -> [Parent.Action]?
    let cancelID: @Sendable (Parent.Effect) -> CancelID??
    let cancelsInFlight: @Sendable (Parent.Effect) -> Bool?
    let cancelled: @Sendable (Parent.Effect) -> [Parent.Mutation]?
    let subscriptions: @Sendable (Parent.State) -> [Parent.Subscription]
    let subscriptionID: @Sendable (Parent.Subscription) -> String?
    let subscriptionKind: @Sendable (Parent.Subscription) -> String?
    /// The child's initial actions, lifted.
    public let initialActions: [Parent.Action]
    /// The child's initial mutations, lifted.
    public let initialMutations: [Parent.Mutation]
    /// The child's projections, named `NAME.projection`.
    public let projections: [AnyProjection<Parent.State>]

    /// Erases `scope`'s child type.
    public init<Child: Reactor>(_ scope: Scope<Parent, Child>) {
        self.init(scope, whole: [])
    }

    /// Erases `scope`'s child type; the child's whole state is also offered as the projection
    /// named like the scope (see ``Scope/projection``).
    public init<Child: Reactor>(_ scope: Scope<Parent, Child>) where Child.State: Equatable {
        self.init(scope, whole: [AnyProjection(scope.projection)])
    }

    private init<Child: Reactor>(_ scope: Scope<Parent, Child>, whole: [AnyProjection<Parent.State>]) {
        name = scope.name
        mutate = { scope.mutate(state: $0, action: $1) }
        reduce = { scope.reduce(state: &$0, mutation: $1) }
        lane = { scope.lane(for: $0) }
        kind = { scope.kind(of: $0) }
        failed = { scope.failed(effect: $0, error: $1) }
        transform = { scope.transform(action: $0) }
        cancelID = { scope.cancelID(for: $0) }
        cancelsInFlight = { scope.cancelsInFlight($0) }
        cancelled = { scope.cancelled(effect: $0) }
        subscriptions = { scope.subscriptions(state: $0) }
        subscriptionID = { scope.subscriptionID(of: $0) }
        subscriptionKind = { scope.subscriptionKind(of: $0) }
        initialActions = scope.initialActions
        initialMutations = scope.initialMutations
        projections = whole + scope.projections
    }
}
