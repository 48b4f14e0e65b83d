import ReactorCore

/// A reactor whose state is the list of every applied mutation, so tests can assert exact order.
struct LogReactor: Reactor {
    enum Action: Codable, Sendable, Equatable {
        /// Applies `sync` at once and starts one effect per entry of `effects`.
        case act(sync: [String], effects: [Work])
    }

    struct Work: Codable, Sendable, Equatable {
        var name: String
        var lane: String?
        init(_ name: String, lane: String? = nil) {
            self.name = name
            self.lane = lane
        }
    }

    enum Mutation: Codable, Sendable, Equatable {
        case log(String)
    }

    typealias Effect = Work

    struct State: Codable, Sendable, Equatable {
        var log: [String] = []
    }

    var initialState: State { State() }

    func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .act(let sync, let effects):
            Mutations(sync: sync.map(Mutation.log), async: effects)
        }
    }

    func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .log(let entry): state.log.append(entry)
        }
    }

    func failed(effect: Effect, error: EffectFailure) -> [Mutation] {
        [.log("\(effect.name) failed: \(error.message)")]
    }

    func lane(for effect: Effect) -> String? { effect.lane }

    func kind(of effect: Effect) -> String { "work" }
}

extension LogReactor.Action {
    static func sync(_ entries: String...) -> Self { .act(sync: entries, effects: []) }
}
