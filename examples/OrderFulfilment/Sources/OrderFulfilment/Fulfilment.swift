import ReactorCore

/// A shop's order fulfilment: stock, orders, and the three outside services an order goes
/// through (the warehouse sets its units aside, the payment gateway charges the card, the
/// carrier ships it).
///
/// - `restock` puts units of a product on the shelf at a price.
/// - `place` holds the order's units at once (a sync mutation: the state owns the stock, so two
///   orders can never take the same unit) and starts two effects that run at the same time on
///   workers: `reserveStock` and `charge`. Both are in the order's **lane**, so their results
///   are applied in that order whichever worker finishes first: an order is always `reserved`
///   before it is `paid`, and `reduce` never sees a payment for an order it does not know the
///   reservation of.
/// - `ship` is accepted only for a paid order (`mutate` reads the state) and starts `ship`,
///   in the same lane.
///
/// A failed effect (after the worker's retries) becomes a **failure mutation**: a failed charge
/// or reservation cancels the order and puts its units back; a failed shipment leaves the order
/// paid, to be shipped again.
public struct Fulfilment: Reactor {
    /// What a client asks for. As JSON: `{"place":{"order":"A1","sku":"mug","quantity":2,"card":"tok_ok"}}`.
    public enum Action: Codable, Sendable, Equatable {
        case restock(sku: String, quantity: Int, priceCents: Int)
        case place(order: String, sku: String, quantity: Int, card: String)
        case ship(order: String, address: String)
    }

    /// One change to the state.
    public enum Mutation: Codable, Sendable, Equatable {
        case restocked(sku: String, quantity: Int, priceCents: Int)
        case placed(order: String, sku: String, quantity: Int, amountCents: Int)
        case refused(reason: String)
        case stockReserved(order: String, pickTicket: String)
        case charged(order: String, paymentID: String)
        case dispatched(order: String)
        case shipped(order: String, tracking: String)
        // The failure mutations (see `failed(effect:error:)`).
        case reservationFailed(order: String, reason: String)
        case paymentFailed(order: String, reason: String)
        case shipmentFailed(order: String, reason: String)
    }

    /// The work workers do, each against one outside service.
    public enum Effect: Codable, Sendable, Equatable {
        case reserveStock(order: String, sku: String, quantity: Int)
        case charge(order: String, amountCents: Int, card: String)
        case ship(order: String, address: String)
    }

    public struct State: Codable, Sendable, Equatable {
        /// By SKU.
        public var stock: [String: StockItem] = [:]
        /// By order id.
        public var orders: [String: Order] = [:]
        /// Actions that were not taken, and why.
        public var refusals: [String] = []

        public init(stock: [String: StockItem] = [:], orders: [String: Order] = [:], refusals: [String] = []) {
            self.stock = stock
            self.orders = orders
            self.refusals = refusals
        }
    }

    public init() {}

    public var initialState: State { State() }

    /// The lane of every effect of one order.
    public static func lane(of order: String) -> String { "order/\(order)" }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .restock(let sku, let quantity, let priceCents):
            guard quantity > 0, priceCents >= 0 else { return [.refused(reason: "restock \(sku): \(quantity) at \(priceCents) cents")] }
            return [.restocked(sku: sku, quantity: quantity, priceCents: priceCents)]

        case .place(let order, let sku, let quantity, let card):
            guard state.orders[order] == nil else { return [.refused(reason: "place \(order): the order exists")] }
            guard let item = state.stock[sku] else { return [.refused(reason: "place \(order): no product \(sku)")] }
            guard quantity > 0, quantity <= item.available else {
                return [.refused(reason: "place \(order): \(quantity) \(sku) wanted, \(item.available) available")]
            }
            let amount = quantity * item.priceCents
            return Mutations(
                sync: [.placed(order: order, sku: sku, quantity: quantity, amountCents: amount)],
                async: [.reserveStock(order: order, sku: sku, quantity: quantity), .charge(order: order, amountCents: amount, card: card)]
            )

        case .ship(let order, let address):
            guard let status = state.orders[order]?.status else { return [.refused(reason: "ship \(order): no such order")] }
            guard status == .paid else { return [.refused(reason: "ship \(order): it is \(status), not paid")] }
            return Mutations(sync: [.dispatched(order: order)], async: [.ship(order: order, address: address)])
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .restocked(let sku, let quantity, let priceCents):
            state.stock[sku, default: StockItem(available: 0, priceCents: priceCents)].available += quantity
            state.stock[sku]?.priceCents = priceCents
        case .placed(let order, let sku, let quantity, let amountCents):
            state.stock[sku]?.available -= quantity
            state.orders[order] = Order(sku: sku, quantity: quantity, amountCents: amountCents, status: .placed, history: ["placed"])
        case .refused(let reason):
            state.refusals.append(reason)
        case .stockReserved(let order, let pickTicket):
            state.orders[order]?.advance("reserved \(pickTicket)", to: .reserved)
        case .charged(let order, let paymentID):
            // The lane applies this after the reservation's outcome: the order is reserved, or
            // cancelled because the reservation failed, and then the payment is to be refunded.
            if state.orders[order]?.status == .cancelled {
                state.orders[order]?.advance("charged \(paymentID), to refund")
            } else {
                state.orders[order]?.advance("charged \(paymentID)", to: .paid)
            }
        case .dispatched(let order):
            state.orders[order]?.advance("dispatched", to: .shipping)
        case .shipped(let order, let tracking):
            state.orders[order]?.advance("shipped \(tracking)", to: .shipped)
        case .reservationFailed(let order, let reason):
            cancel(order, "reservation failed: \(reason)", in: &state)
        case .paymentFailed(let order, let reason):
            cancel(order, "payment failed: \(reason)", in: &state)
        case .shipmentFailed(let order, let reason):
            state.orders[order]?.advance("shipment failed: \(reason)", to: .paid)
        }
    }

    /// Cancels an order and puts its units back on the shelf (once, however often it is cancelled).
    private func cancel(_ id: String, _ step: String, in state: inout State) {
        guard let order = state.orders[id] else { return }
        state.orders[id]?.advance(step, to: .cancelled)
        if order.status != .cancelled { state.stock[order.sku]?.available += order.quantity }
    }

    public func failed(effect: Effect, error: EffectFailure) -> [Mutation] {
        switch effect {
        case .reserveStock(let order, _, _): [.reservationFailed(order: order, reason: error.description)]
        case .charge(let order, _, _): [.paymentFailed(order: order, reason: error.description)]
        case .ship(let order, _): [.shipmentFailed(order: order, reason: error.description)]
        }
    }

    public func lane(for effect: Effect) -> String? {
        switch effect {
        case .reserveStock(let order, _, _), .charge(let order, _, _), .ship(let order, _): Self.lane(of: order)
        }
    }
}
