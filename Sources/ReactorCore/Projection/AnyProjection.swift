/// A ``Projection`` with its value type erased, so that a reactor lists projections of
/// different value types (``Reactor/projections``).
public struct AnyProjection<State>: Sendable {
    /// The projection's name.
    public let name: String
    private let project: @Sendable (State) -> any Encodable & Sendable

    /// Erases `projection`'s value type.
    public init<Value>(_ projection: Projection<State, Value>) {
        name = projection.name
        let value = projection.value
        project = { value($0) }
    }

    private init(name: String, project: @escaping @Sendable (State) -> any Encodable & Sendable) {
        self.name = name
        self.project = project
    }

    /// The projection's value of `state`, for encoding.
    public func value(of state: State) -> any Encodable & Sendable { project(state) }

    /// The same projection of the part of a larger state at `keyPath`, named `prefix.name`
    /// (how a composed reactor offers its children's projections).
    public func pulledBack<Whole>(_ keyPath: KeyPath<Whole, State> & Sendable, prefix: String) -> AnyProjection<Whole> {
        let project = self.project
        return AnyProjection<Whole>(name: "\(prefix).\(name)") { project($0[keyPath: keyPath]) }
    }
}
