/// The subscription type of a reactor that has none: an enum without cases, so no value of it
/// can exist and `subscriptions(state:)` can only return `[]`.
public enum NoSubscription: Codable, Sendable, Hashable {
    /// Always fails: there is no value to decode.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "this reactor has no subscriptions"))
    }

    public func encode(to encoder: any Encoder) throws {}
}

extension Reactor {
    public func subscriptions(state: State) -> [Subscription] { [] }

    public func subscriptionID(of subscription: Subscription) -> String { String(describing: subscription) }

    public func subscriptionKind(of subscription: Subscription) -> String { EffectKind.caseName(of: subscription) }
}
