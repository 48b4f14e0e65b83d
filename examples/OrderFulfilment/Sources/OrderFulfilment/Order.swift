/// One customer order as the shop's state keeps it.
public struct Order: Codable, Sendable, Equatable {
    /// Where an order is in its life.
    public enum Status: String, Codable, Sendable {
        /// Accepted; its stock is held and its reservation and payment are running.
        case placed
        /// The warehouse set the units aside; the payment is still running.
        case reserved
        /// Reserved and paid: it may ship.
        case paid
        /// Handed to the carrier, who has not confirmed yet.
        case shipping
        /// The carrier took it.
        case shipped
        /// Given up: the payment or the reservation failed. Its stock is back on the shelf.
        case cancelled
    }

    public var sku: String
    public var quantity: Int
    public var amountCents: Int
    public var status: Status
    /// Every step applied to the order, oldest first (`placed`, `reserved PICK-A1`, ...).
    public var history: [String]

    public init(sku: String, quantity: Int, amountCents: Int, status: Status, history: [String]) {
        self.sku = sku
        self.quantity = quantity
        self.amountCents = amountCents
        self.status = status
        self.history = history
    }

    /// Records a step in the history and, when given, the status it leads to.
    public mutating func advance(_ step: String, to status: Status? = nil) {
        history.append(step)
        if let status { self.status = status }
    }
}

/// One product on the shelf.
public struct StockItem: Codable, Sendable, Equatable {
    /// Units not held by any order.
    public var available: Int
    public var priceCents: Int

    public init(available: Int, priceCents: Int) {
        self.available = available
        self.priceCents = priceCents
    }
}
