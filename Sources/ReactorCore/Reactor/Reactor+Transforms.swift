extension Reactor {
    public var initialActions: [Action] { [] }

    public var initialMutations: [Mutation] { [] }

    public func transform(action: Action) -> [Action] { [action] }

    public var projections: [AnyProjection<State>] { [] }
}
