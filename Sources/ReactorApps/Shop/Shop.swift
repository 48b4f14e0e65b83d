import ReactorCore

/// A composed app: a ``ShopCart`` and a ``ShopDetail``, each reused unchanged through a
/// ``Scope``, plus a little state of the shop's own. It shows every composition and transform
/// feature at once:
///
/// - the children's kinds are `cart.charge` and `detail.fetch` (a worker can serve one part:
///   `reactor-node worker --app shop --part cart`), the cart's lane is `cart.payments`;
/// - the shop reacts to its children's mutations in `reduce` (`views` counts detail views,
///   `summary` follows the cart);
/// - `buy` expands (`transform(action:)`) into the cart's `add` and `checkout`, one action;
/// - a fresh shop starts with the initial mutation `opened` and the initial action
///   `detail.show("welcome")`, applied once;
/// - projections `cart`, `detail` (each child's whole state), `cart.count` and `summary`.
///
/// JSON forms: actions `{"cart":{"_0":{"add":{"item":"tea","price":3}}}}`,
/// `{"detail":{"_0":{"show":{"item":"tea"}}}}`, `{"buy":{"item":"tea","price":3}}`.
public struct Shop: ComposedReactor {
    public enum Action: Codable, Sendable, Equatable {
        case cart(ShopCart.Action)
        case detail(ShopDetail.Action)
        /// Adds the item and checks out: expanded by `transform(action:)`.
        case buy(item: String, price: Int)
    }

    public enum Mutation: Codable, Sendable, Equatable {
        case cart(ShopCart.Mutation)
        case detail(ShopDetail.Mutation)
        /// The shop opened (the initial mutation).
        case opened
    }

    public enum Effect: Codable, Sendable, Equatable {
        case cart(ShopCart.Effect)
        case detail(ShopDetail.Effect)
    }

    public struct State: Codable, Sendable, Equatable {
        public var cart: ShopCart.State
        public var detail: ShopDetail.State
        /// Whether the initial mutation was applied.
        public var isOpen: Bool
        /// How many times the detail showed an item: the shop's reaction to a child mutation.
        public var views: Int
        /// The cart in words, kept by the shop whenever the cart changes.
        public var summary: String

        public init(cart: ShopCart.State = .init(), detail: ShopDetail.State = .init(), isOpen: Bool = false, views: Int = 0, summary: String = "empty") {
            self.cart = cart
            self.detail = detail
            self.isOpen = isOpen
            self.views = views
            self.summary = summary
        }
    }

    public static let cart = Scope<Shop, ShopCart>(
        "cart", ShopCart(), state: \.cart,
        action: Embedding(Action.cart) { if case .cart(let action) = $0 { action } else { nil } },
        mutation: Embedding(Mutation.cart) { if case .cart(let mutation) = $0 { mutation } else { nil } },
        effect: Embedding(Effect.cart) { if case .cart(let effect) = $0 { effect } else { nil } })

    public static let detail = Scope<Shop, ShopDetail>(
        "detail", ShopDetail(), state: \.detail,
        action: Embedding(Action.detail) { if case .detail(let action) = $0 { action } else { nil } },
        mutation: Embedding(Mutation.detail) { if case .detail(let mutation) = $0 { mutation } else { nil } },
        effect: Embedding(Effect.detail) { if case .detail(let effect) = $0 { effect } else { nil } })

    /// The cart in words.
    public static let summary = Projection<State, String>("summary") { $0.summary }

    public let parts: [Part<Shop>] = [Part(Shop.cart), Part(Shop.detail)]

    public init() {}

    public var initialState: State { State() }

    public var initialMutations: [Mutation] { [.opened] + parts.flatMap(\.initialMutations) }

    public var initialActions: [Action] { [.detail(.show(item: "welcome"))] + parts.flatMap(\.initialActions) }

    public var projections: [AnyProjection<State>] { parts.flatMap(\.projections) + [AnyProjection(Self.summary)] }

    public func transform(action: Action) -> [Action] {
        if case .buy(let item, let price) = action { return [.cart(.add(item: item, price: price)), .cart(.checkout)] }
        return transformParts(action: action) ?? [action]
    }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        // `buy` never reaches here: transform(action:) expanded it.
        mutateParts(state: state, action: action) ?? .none
    }

    public func reduce(state: inout State, mutation: Mutation) {
        if reduceParts(state: &state, mutation: mutation) {
            // The shop's reactions to its children's mutations.
            switch mutation {
            case .detail(.shown): state.views += 1
            case .cart:
                let items = state.cart.items.keys.sorted()
                state.summary = items.isEmpty ? "empty" : "\(items.count) item(s): \(items.joined(separator: ", "))"
            default: break
            }
            return
        }
        if case .opened = mutation { state.isOpen = true }
    }

    /// The shop's effect handler, one part per child: what `App("shop", reactor:parts:)` takes.
    public static func effects(cart: ShopCartEffects = ShopCartEffects(), detail: ShopDetailEffects = ShopDetailEffects()) -> [PartEffects<Effect, Mutation>] {
        [Shop.cart.effects(cart), Shop.detail.effects(detail)]
    }
}
