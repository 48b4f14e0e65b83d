import ReactorCore

/// The seeds' CountingReactor: `countUp` adds one at once, `countUpAsync` adds one through an
/// effect that runs on a worker.
///
/// JSON forms: actions `{"countUp":{}}` and `{"countUpAsync":{}}`, state `{"count": N}`.
public struct Counter: Reactor {
    /// What a client can ask for.
    public enum Action: Codable, Sendable, Equatable {
        case countUp
        case countUpAsync
    }

    /// The only change: one more.
    public enum Mutation: Codable, Sendable, Equatable {
        case increase
    }

    /// The slow way to add one.
    public enum Effect: Codable, Sendable, Equatable {
        case slowIncrease
    }

    /// How many increases were applied.
    public struct State: Codable, Sendable, Equatable {
        public var count: Int

        public init(count: Int = 0) { self.count = count }
    }

    public init() {}

    public var initialState: State { State() }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .countUp: [.increase]
        case .countUpAsync: Mutations(async: .slowIncrease)
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .increase: state.count += 1
        }
    }
}

/// Runs the counter's effect: optionally waits, then emits one increase.
public struct CounterEffects: EffectHandler {
    /// How long `slowIncrease` takes before it emits.
    public var delay: Duration

    /// Creates the handler.
    public init(delay: Duration = .zero) { self.delay = delay }

    public func run(_ effect: Counter.Effect, emit: Emitter<Counter.Mutation>) async throws {
        switch effect {
        case .slowIncrease:
            if delay > .zero { try await EffectClock.sleep(for: delay) }
            await emit(.increase)
        }
    }
}
