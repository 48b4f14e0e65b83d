import ReactorCore

/// Runs the fulfilment's effects against the outside services, on workers (or in a local
/// `Store`, or in a test).
///
/// Each effect emits the one mutation its service's answer means, or throws what the service
/// threw: the worker retries it (`--attempts`), then applies the reactor's failure mutation.
public struct FulfilmentEffects: EffectHandler {
    public let warehouse: Warehouse
    public let payments: PaymentGateway
    public let carrier: Carrier

    public init(warehouse: Warehouse = Warehouse(), payments: PaymentGateway = PaymentGateway(), carrier: Carrier = Carrier()) {
        self.warehouse = warehouse
        self.payments = payments
        self.carrier = carrier
    }

    public func run(_ effect: Fulfilment.Effect, emit: Emitter<Fulfilment.Mutation>) async throws {
        switch effect {
        case .reserveStock(let order, let sku, let quantity):
            let ticket = try await warehouse.reserve(order: order, sku: sku, quantity: quantity)
            await emit(.stockReserved(order: order, pickTicket: ticket))
        case .charge(let order, let amountCents, let card):
            let payment = try await payments.charge(order: order, amountCents: amountCents, card: card)
            await emit(.charged(order: order, paymentID: payment))
        case .ship(let order, let address):
            let tracking = try await carrier.ship(order: order, address: address)
            await emit(.shipped(order: order, tracking: tracking))
        }
    }
}
