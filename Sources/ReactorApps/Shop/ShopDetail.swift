import ReactorCore

/// The shop's detail view, a reactor of its own (the seeds' `DetailReactor`): the item shown
/// and its description, which an effect loads.
///
/// JSON forms: actions `{"show":{"item":"tea"}}`; state `{"item":"tea","description":"about tea","loads":1}`.
public struct ShopDetail: Reactor {
    public enum Action: Codable, Sendable, Equatable {
        case show(item: String)
    }

    public enum Mutation: Codable, Sendable, Equatable {
        case shown(item: String)
        case loaded(item: String, description: String)
    }

    public enum Effect: Codable, Sendable, Equatable {
        /// Loads the description of `item` (a worker's job).
        case fetch(item: String)
    }

    public struct State: Codable, Sendable, Equatable {
        public var item: String?
        public var description: String?
        /// Descriptions loaded so far.
        public var loads: Int

        public init(item: String? = nil, description: String? = nil, loads: Int = 0) {
            self.item = item
            self.description = description
            self.loads = loads
        }
    }

    public init() {}

    public var initialState: State { State() }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .show(let item): Mutations(sync: [.shown(item: item)], async: [.fetch(item: item)])
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .shown(let item):
            state.item = item
            state.description = nil
        case .loaded(let item, let description):
            // A late description of an item no longer shown is dropped.
            guard state.item == item else { return }
            state.description = description
            state.loads += 1
        }
    }
}

/// Loads descriptions: `about ITEM`.
public struct ShopDetailEffects: EffectHandler {
    public init() {}

    public func run(_ effect: ShopDetail.Effect, emit: Emitter<ShopDetail.Mutation>) async throws {
        switch effect {
        case .fetch(let item): await emit(.loaded(item: item, description: "about \(item)"))
        }
    }
}
