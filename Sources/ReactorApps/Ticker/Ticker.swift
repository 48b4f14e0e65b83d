import ReactorCore

/// A price ticker that shows subscriptions: the state says which symbols to follow and for how
/// many ticks; each followed symbol is a subscription whose handler sends `tick` actions, and a
/// symbol whose ticks are all in leaves the subscriptions again.
///
/// JSON forms: actions `{"follow":{"symbol":"ACME","ticks":20}}`, `{"unfollow":{"symbol":"ACME"}}`
/// (`{"tick":{"symbol":"ACME","n":0}}` is what the subscription sends); state
/// `{"targets":{"ACME":20},"ticks":{"ACME":[0,1,2]}}`.
public struct Ticker: Reactor {
    /// What a client (or the subscription) can ask for.
    public enum Action: Codable, Sendable, Equatable {
        /// Follow `symbol` until `ticks` ticks have arrived.
        case follow(symbol: String, ticks: UInt64)
        /// Stop following `symbol` (its ticks so far stay).
        case unfollow(symbol: String)
        /// The `n`-th tick of `symbol`, sent by its subscription.
        case tick(symbol: String, n: UInt64)
    }

    /// Changes to the state.
    public enum Mutation: Codable, Sendable, Equatable {
        case target(symbol: String, ticks: UInt64)
        case forget(symbol: String)
        case tick(symbol: String, n: UInt64)
    }

    /// The ticker has no effects: everything comes from its subscriptions.
    public enum Effect: Codable, Sendable, Equatable {
        case none
    }

    /// One followed symbol's feed.
    public enum Subscription: Codable, Sendable, Hashable {
        case quotes(symbol: String)
    }

    /// Which symbols are followed and what arrived.
    public struct State: Codable, Sendable, Equatable {
        /// How many ticks each followed symbol should get.
        public var targets: [String: UInt64]
        /// The tick numbers applied for each symbol, in the order they were applied.
        public var ticks: [String: [UInt64]]

        public init(targets: [String: UInt64] = [:], ticks: [String: [UInt64]] = [:]) {
            self.targets = targets
            self.ticks = ticks
        }
    }

    public init() {}

    public var initialState: State { State() }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .follow(let symbol, let ticks): [.target(symbol: symbol, ticks: ticks)]
        case .unfollow(let symbol): [.forget(symbol: symbol)]
        case .tick(let symbol, let n):
            // A tick for a symbol no longer followed changes nothing.
            state.targets[symbol] == nil ? .none : [.tick(symbol: symbol, n: n)]
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .target(let symbol, let ticks): state.targets[symbol] = ticks
        case .forget(let symbol): state.targets[symbol] = nil
        case .tick(let symbol, let n): state.ticks[symbol, default: []].append(n)
        }
    }

    /// One feed per followed symbol that still misses ticks, in symbol order.
    public func subscriptions(state: State) -> [Subscription] {
        state.targets.keys.sorted().filter { (state.ticks[$0]?.count ?? 0) < state.targets[$0] ?? 0 }.map { .quotes(symbol: $0) }
    }

    public func subscriptionID(of subscription: Subscription) -> String {
        switch subscription {
        case .quotes(let symbol): "quotes/\(symbol)"
        }
    }
}

/// The ticker's (absent) effects.
public struct TickerEffects: EffectHandler {
    public init() {}

    public func run(_ effect: Ticker.Effect, emit: Emitter<Ticker.Mutation>) async throws {}
}

/// Sends a symbol's ticks: tick `n` is the feed's `n`-th event, one every `interval`, resuming
/// after the last applied one.
public struct TickerFeed: SubscriptionHandler {
    /// The pause before each tick.
    public var interval: Duration

    /// Creates the feed.
    public init(interval: Duration = .milliseconds(20)) { self.interval = interval }

    public func run(_ subscription: Ticker.Subscription, resumingAfter lastAppliedEvent: UInt64?, send: SubscriptionSender<Ticker.Action>) async throws {
        switch subscription {
        case .quotes(let symbol):
            while true {
                try await EffectClock.sleep(for: interval)
                await send(.tick(symbol: symbol, n: send.nextIndex))
            }
        }
    }
}
