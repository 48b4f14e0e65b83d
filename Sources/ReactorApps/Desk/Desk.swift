import ReactorCore

/// A market desk composed of a ``Ticker`` (part `quotes`) and a ``Search`` (part `lookup`), each
/// reused unchanged: the seeds' four capabilities in one app.
///
/// - **Composition**: the children keep their own `mutate`, `reduce`, handlers and hooks; their
///   names get the part's prefix (effect kind `lookup.search`, cancel id `lookup.search`,
///   subscription kind `quotes.quotes`, subscription id `quotes.quotes/ACME`), so a worker can
///   serve one part (`worker --app desk --part quotes`).
/// - **Subscriptions**: following a symbol runs its quote feed on a worker until its ticks are in.
/// - **Cancellation**: a new lookup cancels the one in flight; the cancel hook records it.
/// - **Transforms**: a fresh desk starts following `ACME` for 10 ticks (an initial action);
///   `watch` expands into a lookup of the symbol and following it (one action); projections
///   `quotes`, `lookup` (each child's state) and `board`.
///
/// The desk reacts to its children in `reduce`: `ticks` counts every tick applied and `board`
/// says where each symbol stands.
///
/// JSON forms: actions `{"watch":{"symbol":"XYZ","ticks":5,"pauseMilliseconds":0}}`,
/// `{"lookup":{"_0":{"search":{"query":"X","pauseMilliseconds":500}}}}`,
/// `{"quotes":{"_0":{"follow":{"symbol":"XYZ","ticks":5}}}}`.
public struct Desk: ComposedReactor {
    public enum Action: Codable, Sendable, Equatable {
        case quotes(Ticker.Action)
        case lookup(Search.Action)
        /// Looks `symbol` up and follows it for `ticks` ticks: expanded by `transform(action:)`.
        case watch(symbol: String, ticks: UInt64, pauseMilliseconds: Int)
    }

    public enum Mutation: Codable, Sendable, Equatable {
        case quotes(Ticker.Mutation)
        case lookup(Search.Mutation)
    }

    public enum Effect: Codable, Sendable, Equatable {
        case quotes(Ticker.Effect)
        case lookup(Search.Effect)
    }

    public enum Subscription: Codable, Sendable, Hashable {
        case quotes(Ticker.Subscription)
    }

    public struct State: Codable, Sendable, Equatable {
        public var quotes: Ticker.State
        public var lookup: Search.State
        /// Ticks applied, over every symbol: the desk's reaction to its ticker's mutations.
        public var ticks: Int
        /// Where each followed symbol stands, in words (`"ACME 10/10"`), kept by the desk.
        public var board: [String]

        public init(quotes: Ticker.State = .init(), lookup: Search.State = .init(), ticks: Int = 0, board: [String] = []) {
            self.quotes = quotes
            self.lookup = lookup
            self.ticks = ticks
            self.board = board
        }
    }

    public static let quotes = Scope<Desk, Ticker>(
        "quotes", Ticker(), state: \.quotes,
        action: Embedding(Action.quotes) { if case .quotes(let action) = $0 { action } else { nil } },
        mutation: Embedding(Mutation.quotes) { if case .quotes(let mutation) = $0 { mutation } else { nil } },
        effect: Embedding(Effect.quotes) { if case .quotes(let effect) = $0 { effect } else { nil } },
        subscription: Embedding(Subscription.quotes) { if case .quotes(let subscription) = $0 { subscription } else { nil } })

    public static let lookup = Scope<Desk, Search>(
        "lookup", Search(), state: \.lookup,
        action: Embedding(Action.lookup) { if case .lookup(let action) = $0 { action } else { nil } },
        mutation: Embedding(Mutation.lookup) { if case .lookup(let mutation) = $0 { mutation } else { nil } },
        effect: Embedding(Effect.lookup) { if case .lookup(let effect) = $0 { effect } else { nil } })

    /// The board: where each followed symbol stands.
    public static let board = Projection<State, [String]>("board") { $0.board }

    /// The symbol a fresh desk follows, and for how many ticks.
    public static let opening = (symbol: "ACME", ticks: UInt64(10))

    public let parts: [Part<Desk>] = [Part(Desk.quotes), Part(Desk.lookup)]

    public init() {}

    public var initialState: State { State() }

    public var initialActions: [Action] { [.quotes(.follow(symbol: Self.opening.symbol, ticks: Self.opening.ticks))] }

    public var projections: [AnyProjection<State>] { parts.flatMap(\.projections) + [AnyProjection(Self.board)] }

    public func transform(action: Action) -> [Action] {
        if case .watch(let symbol, let ticks, let pause) = action {
            return [.lookup(.search(query: symbol, pauseMilliseconds: pause)), .quotes(.follow(symbol: symbol, ticks: ticks))]
        }
        return transformParts(action: action) ?? [action]
    }

    public func reduce(state: inout State, mutation: Mutation) {
        guard reduceParts(state: &state, mutation: mutation), case .quotes(let quote) = mutation else { return }
        if case .tick = quote { state.ticks += 1 }
        state.board = state.quotes.targets.keys.sorted().map { symbol in
            "\(symbol) \(state.quotes.ticks[symbol]?.count ?? 0)/\(state.quotes.targets[symbol] ?? 0)"
        }
    }

    /// The desk's effect handlers, one per part: what `App("desk", reactor:parts:subscriptions:)` takes.
    public static func effects() -> [PartEffects<Effect, Mutation>] {
        [Desk.quotes.effects(TickerEffects()), Desk.lookup.effects(SearchEffects())]
    }

    /// The desk's subscription handlers: the ticker's feed.
    public static func subscriptions(feed: TickerFeed = TickerFeed()) -> [PartSubscriptions<Subscription, Action>] {
        [Desk.quotes.subscriptions(feed)]
    }
}
