import ReactorCore

/// A stock list of many items where each action touches one: the app that shows what a large
/// state costs, since every published snapshot carries all of it.
///
/// JSON forms: action `{"adjust":{"item":42,"by":-1}}`; state
/// `{"adjustments":N,"items":[{"id":0,"name":"item-00000","quantity":100},...]}`.
/// An adjustment of an item that does not exist is counted and changes no item.
public struct Inventory: Reactor {
    /// What a client can ask for.
    public enum Action: Codable, Sendable, Equatable {
        /// Changes the quantity of item `item` by `by`.
        case adjust(item: Int, by: Int)
    }

    /// The only change: one item's quantity moved.
    public enum Mutation: Codable, Sendable, Equatable {
        case adjusted(item: Int, by: Int)
    }

    /// The inventory has no slow work.
    public enum Effect: Codable, Sendable, Equatable {
        case none
    }

    /// One stock line.
    public struct Item: Codable, Sendable, Equatable {
        public var id: Int
        public var name: String
        public var quantity: Int

        public init(id: Int, name: String, quantity: Int) {
            self.id = id
            self.name = name
            self.quantity = quantity
        }
    }

    /// Every item, by id (the array index), and how many adjustments were applied.
    public struct State: Codable, Sendable, Equatable {
        /// Adjustments applied, including those of unknown items.
        public var adjustments: Int
        public var items: [Item]

        public init(adjustments: Int = 0, items: [Item]) {
            self.adjustments = adjustments
            self.items = items
        }
    }

    /// The number of items in the initial state.
    public let itemCount: Int

    /// Creates the app with `itemCount` items of quantity 100.
    public init(itemCount: Int = 10_000) {
        self.itemCount = max(0, itemCount)
    }

    public var initialState: State {
        State(items: (0..<itemCount).map { Item(id: $0, name: Self.name(of: $0), quantity: 100) })
    }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .adjust(let item, let by): [.adjusted(item: item, by: by)]
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .adjusted(let item, let by):
            state.adjustments += 1
            if state.items.indices.contains(item) { state.items[item].quantity += by }
        }
    }

    /// The name of item `id`: `item-00042`.
    public static func name(of id: Int) -> String {
        let digits = String(id)
        return "item-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }
}

/// The inventory's effect handler: there are no effects, so it never emits.
public struct InventoryEffects: EffectHandler {
    public init() {}

    public func run(_ effect: Inventory.Effect, emit: Emitter<Inventory.Mutation>) async throws {}
}
