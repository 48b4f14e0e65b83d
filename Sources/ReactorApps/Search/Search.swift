import ReactorCore

/// Search as you type: each keystroke starts a search, which cancels the one still running.
/// The app that shows cancellation (a cancel id, `cancelsInFlight`, `Mutations.cancel` and the
/// cancel hook) across processes.
///
/// JSON forms: actions `{"search":{"query":"ab","pauseMilliseconds":500}}` and `{"cancel":{}}`;
/// state `{"query":"ab","results":["a:1","ab:1","ab:2"],"finished":["ab"],"cancelled":["a"]}`.
public struct Search: Reactor {
    /// The cancel id every search shares.
    public static let searchID: CancelID = "search"

    /// What a client can ask for.
    public enum Action: Codable, Sendable, Equatable {
        /// Searches for `query`: one batch of results at once, the second after the pause.
        case search(query: String, pauseMilliseconds: Int)
        /// Cancels the search still running, if any.
        case cancel
    }

    /// The changes.
    public enum Mutation: Codable, Sendable, Equatable {
        case queryChanged(String)
        /// A batch of results of `query`.
        case hits(query: String, results: [String])
        case finished(query: String)
        case cancelled(query: String)
    }

    /// The search, on a worker.
    public enum Effect: Codable, Sendable, Equatable {
        case search(query: String, pauseMilliseconds: Int)
    }

    /// The current query, every result applied (of any query: a cancelled search's late results
    /// would show here), and the searches that finished or were cancelled, in order.
    public struct State: Codable, Sendable, Equatable {
        public var query: String
        public var results: [String]
        public var finished: [String]
        public var cancelled: [String]

        public init(query: String = "", results: [String] = [], finished: [String] = [], cancelled: [String] = []) {
            self.query = query
            self.results = results
            self.finished = finished
            self.cancelled = cancelled
        }
    }

    public init() {}

    public var initialState: State { State() }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .search(let query, let pause):
            Mutations(sync: [.queryChanged(query)], async: [.search(query: query, pauseMilliseconds: pause)])
        case .cancel:
            Mutations(cancel: [Self.searchID])
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .queryChanged(let query): state.query = query
        case .hits(_, let results): state.results += results
        case .finished(let query): state.finished.append(query)
        case .cancelled(let query): state.cancelled.append(query)
        }
    }

    public func cancelID(for effect: Effect) -> CancelID? { Self.searchID }

    public func cancelsInFlight(_ effect: Effect) -> Bool { true }

    public func cancelled(effect: Effect) -> [Mutation] {
        switch effect {
        case .search(let query, _): [.cancelled(query: query)]
        }
    }
}

/// Runs a search: emits `query:1`, waits the pause (a cancelled search stops here), emits
/// `query:2` and `finished`.
public struct SearchEffects: EffectHandler {
    public init() {}

    public func run(_ effect: Search.Effect, emit: Emitter<Search.Mutation>) async throws {
        switch effect {
        case .search(let query, let pause):
            await emit(.hits(query: query, results: ["\(query):1"]))
            if pause > 0 { try await EffectClock.sleep(for: .milliseconds(pause)) }
            await emit(.hits(query: query, results: ["\(query):2"]))
            await emit(.finished(query: query))
        }
    }
}
