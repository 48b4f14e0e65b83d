/// The subscription handler of a composed app: each subscription runs on the first part that
/// takes it.
///
/// A subscription no part takes throws ``UnhandledSubscription``; the runtime runs it again
/// after the retry policy's backoff, as for any handler that throws.
public struct ComposedSubscriptions<Subscription: Codable & Sendable & Hashable, Action: Codable & Sendable>: SubscriptionHandler {
    /// The parts, asked in order.
    public let parts: [PartSubscriptions<Subscription, Action>]

    /// Routes subscriptions to `parts`.
    public init(_ parts: [PartSubscriptions<Subscription, Action>]) {
        self.parts = parts
    }

    public func run(_ subscription: Subscription, resumingAfter lastAppliedEvent: UInt64?, send: SubscriptionSender<Action>) async throws {
        for part in parts where try await part.run(subscription, resumingAfter: lastAppliedEvent, send: send) { return }
        throw UnhandledSubscription(kind: EffectKind.caseName(of: subscription), parts: parts.map(\.name))
    }

    /// Only the part named `name` (what a worker serving one part runs), or `nil` if none is.
    public func only(_ name: String) -> ComposedSubscriptions? {
        let chosen = parts.filter { $0.name == name }
        return chosen.isEmpty ? nil : ComposedSubscriptions(chosen)
    }
}

/// A composed app's subscription that none of the handler's parts runs.
public struct UnhandledSubscription: Error, Hashable, Sendable, CustomStringConvertible {
    /// The subscription's case name.
    public var kind: String
    /// The parts the handler has.
    public var parts: [String]

    public var description: String {
        "no part of this handler runs subscription '\(kind)' (parts: \(parts.joined(separator: ", ")))"
    }
}
