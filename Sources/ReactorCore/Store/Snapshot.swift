/// A state together with the version it has: what subscribers and observers receive.
public struct Snapshot<State> {
    /// The number of mutations applied to reach `state`.
    public var version: UInt64
    /// The state at that version.
    public var state: State

    /// Creates a snapshot.
    public init(version: UInt64, state: State) {
        self.version = version
        self.state = state
    }
}

extension Snapshot: Sendable where State: Sendable {}
extension Snapshot: Equatable where State: Equatable {}
extension Snapshot: Codable where State: Codable {}

/// What sending an action returned: its sequence number and the state right after its sync
/// mutations.
public struct Receipt<State> {
    /// The action's sequence number.
    public var actionSeq: UInt64
    /// The version after the action's sync mutations.
    public var version: UInt64
    /// The state at that version.
    public var state: State
    /// The jobs the action started.
    public var jobs: [JobID]
}

extension Receipt: Sendable where State: Sendable {}
