import Synchronization

/// The payment provider, as the effects see it: charges a card, answers with a payment id.
///
/// Simulated here, with the two failures a real one has:
/// - **transient**: the first `unavailableAttempts` attempts of each charge fail with
///   ``Unavailable`` (a timeout, a 503); the worker's retries get past them;
/// - **for good**: the card `tok_declined` is declined on every attempt, so the charge fails
///   after the last retry and the reactor's failure mutation cancels the order.
///
/// A charge is idempotent by order (a real provider takes an idempotency key): a retry of a
/// charge that went through gets the same payment id and charges nothing twice.
public final class PaymentGateway: Sendable {
    /// A transient refusal: try again.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String { "payment gateway unavailable" }
    }

    /// The card was declined: trying again will not help.
    public struct Declined: Error, CustomStringConvertible {
        public var card: String
        public var description: String { "card \(card) declined" }
    }

    /// The card every attempt declines.
    public static let declinedCard = "tok_declined"

    public let unavailableAttempts: Int
    /// Attempts seen per order, in this process.
    private let attempts = Mutex<[String: Int]>([:])

    public init(unavailableAttempts: Int = 0) {
        self.unavailableAttempts = unavailableAttempts
    }

    /// Charges `amountCents` to `card` for `order`; returns the payment id.
    public func charge(order: String, amountCents: Int, card: String) async throws -> String {
        let attempt = attempts.withLock { attempts in
            attempts[order, default: 0] += 1
            return attempts[order] ?? 0
        }
        if attempt <= unavailableAttempts { throw Unavailable() }
        if card == Self.declinedCard { throw Declined(card: card) }
        return "pay-\(order)"
    }
}
