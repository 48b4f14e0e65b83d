import ReactorCore

/// A reactor whose subscription's events cancel effects: fetches run as effects of cancel id
/// `fetch`; `watch` starts the `stops` subscription, whose event `stop` cancels every fetch
/// (each cancelled one applies `abandoned`). Shared by the core's and the authority's tests of
/// events that cancel jobs.
public struct StoppableFetches: Reactor {
    public enum Action: Codable, Sendable, Equatable { case fetch, watch, stop }
    public enum Mutation: Codable, Sendable, Equatable { case watching, stopped, fetched, abandoned }
    public enum Effect: Codable, Sendable, Equatable { case fetch }
    public enum Subscription: Codable, Sendable, Hashable { case stops }
    public struct State: Codable, Sendable, Equatable {
        public var watching = false
        public var stopped = 0
        public var fetched = 0
        public var abandoned = 0

        public init(watching: Bool = false, stopped: Int = 0, fetched: Int = 0, abandoned: Int = 0) {
            self.watching = watching
            self.stopped = stopped
            self.fetched = fetched
            self.abandoned = abandoned
        }
    }

    public init() {}

    public var initialState: State { State() }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .fetch: Mutations(async: [.fetch])
        case .watch: [.watching]
        case .stop: Mutations(sync: [.stopped], cancel: ["fetch"])
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .watching: state.watching = true
        case .stopped: state.stopped += 1
        case .fetched: state.fetched += 1
        case .abandoned: state.abandoned += 1
        }
    }

    public func cancelID(for effect: Effect) -> CancelID? { "fetch" }
    public func cancelled(effect: Effect) -> [Mutation] { [.abandoned] }
    public func subscriptions(state: State) -> [Subscription] { state.watching ? [.stops] : [] }
    public func subscriptionID(of subscription: Subscription) -> String { "stops" }
}
