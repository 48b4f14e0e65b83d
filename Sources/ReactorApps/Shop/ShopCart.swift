import ReactorCore

/// The shop's cart, a reactor of its own: items with prices, and a checkout whose payment is an
/// effect in the ordered lane `payments` (so payments settle in checkout order).
///
/// JSON forms: actions `{"add":{"item":"tea","price":3}}`, `{"checkout":{}}`; state
/// `{"items":{"tea":3},"paid":[3],"checkouts":1}`.
public struct ShopCart: Reactor {
    public enum Action: Codable, Sendable, Equatable {
        case add(item: String, price: Int)
        case remove(item: String)
        case checkout
    }

    public enum Mutation: Codable, Sendable, Equatable {
        case added(item: String, price: Int)
        case removed(item: String)
        case checkedOut(total: Int)
        case paid(total: Int)
    }

    public enum Effect: Codable, Sendable, Equatable {
        /// Charges `total` (a worker's job).
        case charge(total: Int)
    }

    public struct State: Codable, Sendable, Equatable {
        /// Price by item, in the cart now.
        public var items: [String: Int]
        /// Totals charged, in order.
        public var paid: [Int]
        /// How many checkouts were made.
        public var checkouts: Int

        public init(items: [String: Int] = [:], paid: [Int] = [], checkouts: Int = 0) {
            self.items = items
            self.paid = paid
            self.checkouts = checkouts
        }
    }

    /// The number of items in the cart: what a badge shows.
    public static let count = Projection<State, Int>("count") { $0.items.count }

    public init() {}

    public var initialState: State { State() }

    public var projections: [AnyProjection<State>] { [AnyProjection(Self.count)] }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .add(let item, let price): return [.added(item: item, price: price)]
        case .remove(let item): return state.items[item] == nil ? .none : [.removed(item: item)]
        case .checkout:
            let total = state.items.values.reduce(0, +)
            return state.items.isEmpty ? .none : Mutations(sync: [.checkedOut(total: total)], async: [.charge(total: total)])
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .added(let item, let price): state.items[item] = price
        case .removed(let item): state.items[item] = nil
        case .checkedOut:
            state.items = [:]
            state.checkouts += 1
        case .paid(let total): state.paid.append(total)
        }
    }

    public func lane(for effect: Effect) -> String? { "payments" }
}

/// Runs the cart's payments: emits `paid` after `delay`.
public struct ShopCartEffects: EffectHandler {
    public var delay: Duration

    public init(delay: Duration = .zero) { self.delay = delay }

    public func run(_ effect: ShopCart.Effect, emit: Emitter<ShopCart.Mutation>) async throws {
        switch effect {
        case .charge(let total):
            if delay > .zero { try await EffectClock.sleep(for: delay) }
            await emit(.paid(total: total))
        }
    }
}
