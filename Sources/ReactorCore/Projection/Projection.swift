/// A named view of a state: what an observer follows instead of the whole state (a child's part
/// of a composed state, a count, a summary). Observers get a new value only when it changes.
///
/// ```swift
/// static let total = Projection<State, Int>("total") { $0.items.count }
/// var projections: [AnyProjection<State>] { [AnyProjection(Self.total)] }
/// ```
///
/// The function must be pure: the distributed authority computes it after each batch and
/// publishes the value on the feed only when its encoding changed.
public struct Projection<State, Value: Codable & Equatable & Sendable>: Sendable {
    /// The name observers ask for (`reactor-node observe --projection NAME`).
    public let name: String
    /// The view of a state.
    public let value: @Sendable (State) -> Value

    /// Creates a projection named `name`.
    public init(_ name: String, _ value: @escaping @Sendable (State) -> Value) {
        self.name = name
        self.value = value
    }
}
