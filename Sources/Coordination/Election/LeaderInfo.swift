/// What a candidate publishes under the leader key when it wins: its name and its endpoints
/// (the addresses its clients, workers, observers and standbys connect to), as JSON.
public struct LeaderInfo: Codable, Sendable, Equatable {
    /// The candidate's name, unique among the candidates of one app (for logs and operators).
    public var name: String
    /// Its endpoints by role (`"actions"`, `"workers"`, `"feed"`, ...).
    public var endpoints: [String: String]

    public init(name: String, endpoints: [String: String] = [:]) {
        self.name = name
        self.endpoints = endpoints
    }
}
