import ReactorCore

/// The authority's projections (``Reactor/projections``) and the encoded value last published
/// of each that has subscribers: a projection is published again only when its bytes change.
///
/// A projection nobody subscribes to is neither computed nor remembered, so a subscriber that
/// comes back later gets the current value at once; an app without projections costs nothing.
struct ProjectionFeed<State> {
    private let projections: [AnyProjection<State>]
    private var last: [String: [UInt8]] = [:]
    /// The state version `last` was computed at.
    private var computedAt: UInt64?

    init(_ projections: [AnyProjection<State>]) {
        // The first of two projections with one name wins; names are the feed's topics.
        var seen: Set<String> = []
        self.projections = projections.filter { seen.insert($0.name).inserted }
    }

    var names: [String] { projections.map(\.name) }

    /// Whether any value is remembered (it must be forgotten once its subscribers leave).
    var remembersAny: Bool { !last.isEmpty }

    /// The wanted projections whose encoded value at `version` differs from the one last
    /// published; forgets those no longer wanted.
    mutating func changes(of state: State, version: UInt64, wanted: Set<String>,
                          encode: (any Encodable & Sendable) -> [UInt8]?) -> [(name: String, payload: [UInt8])] {
        if last.keys.contains(where: { !wanted.contains($0) }) { last = last.filter { wanted.contains($0.key) } }
        guard !wanted.isEmpty else { return [] }
        var changed: [(name: String, payload: [UInt8])] = []
        for projection in projections where wanted.contains(projection.name) {
            if computedAt == version, last[projection.name] != nil { continue }
            guard let bytes = encode(projection.value(of: state)), last[projection.name] != bytes else { continue }
            last[projection.name] = bytes
            changed.append((projection.name, bytes))
        }
        computedAt = version
        return changed
    }
}
