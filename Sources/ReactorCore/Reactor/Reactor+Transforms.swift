extension Reactor {
    public var initialActions: [Action] { [] }

    public var initialMutations: [Mutation] { [] }

    @inlinable
    public func transform(action: Action) -> [Action] { [action] }

    public var projections: [AnyProjection<State>] { [] }
}
