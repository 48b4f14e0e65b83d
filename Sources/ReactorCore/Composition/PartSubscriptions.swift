/// The subscription handler of one part of a composed app: it runs the parent's subscriptions
/// that belong to the part (with the child's own handler) and declines the others.
///
/// Made by ``Scope/subscriptions(_:)``; ``ComposedSubscriptions`` routes each subscription to the
/// part that takes it. A worker that serves one part only runs that part's handler alone.
public struct PartSubscriptions<Subscription: Codable & Sendable & Hashable, Action: Codable & Sendable>: Sendable {
    /// The part's name (its scope's), the prefix of its subscription kinds.
    public let name: String
    private let body: @Sendable (Subscription, UInt64?, SubscriptionSender<Action>) async throws -> Bool

    /// Runs `handler` for the subscriptions `extract` finds, sending its actions through `embed`.
    public init<H: SubscriptionHandler>(name: String, handler: H, embed: @escaping @Sendable (H.Action) -> Action,
                                        extract: @escaping @Sendable (Subscription) -> H.Subscription?) {
        self.name = name
        body = { subscription, after, send in
            guard let own = extract(subscription) else { return false }
            // The child's sender hands each action, lifted, to the parent's: one index each, in order.
            let lifted = SubscriptionSender<H.Action>(firstIndex: send.nextIndex) { _, action in await send(embed(action)) }
            try await handler.run(own, resumingAfter: after, send: lifted)
            return true
        }
    }

    /// Runs `handler` for every subscription (a parent's handler of its own subscriptions).
    public init<H: SubscriptionHandler>(name: String, handler: H) where H.Subscription == Subscription, H.Action == Action {
        self.init(name: name, handler: handler, embed: { $0 }, extract: { $0 })
    }

    /// Runs `subscription` if it is the part's; `false` (nothing run) otherwise.
    public func run(_ subscription: Subscription, resumingAfter lastAppliedEvent: UInt64?, send: SubscriptionSender<Action>) async throws -> Bool {
        try await body(subscription, lastAppliedEvent, send)
    }
}
