import ReactorCore

/// The warehouse's system, as the effects see it: it sets units aside for an order and answers
/// with a pick ticket.
///
/// Simulated here: it takes `delay` to answer (a slow outside service, so that a payment often
/// ends first) and always succeeds. The ticket depends on the order only, so a retried or
/// re-dispatched reservation gets the same one (effects run at least once).
public struct Warehouse: Sendable {
    public var delay: Duration

    public init(delay: Duration = .zero) {
        self.delay = delay
    }

    /// Sets `quantity` units of `sku` aside for `order`; returns the pick ticket.
    public func reserve(order: String, sku: String, quantity: Int) async throws -> String {
        if delay > .zero { try await EffectClock.sleep(for: delay) }
        return "PICK-\(order)"
    }
}
