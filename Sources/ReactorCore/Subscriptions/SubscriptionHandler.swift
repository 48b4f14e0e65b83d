/// Runs subscriptions: the long-running side of a reactor (a price feed, a queue consumer, a
/// timer), on a worker or in the local store.
///
/// `run` sends events back as the reactor's *actions*, which go through `mutate` like any
/// client's action (so they may have effects), each exactly once and in order. It runs until its
/// task is cancelled, which happens when the subscription leaves the reactor's
/// `subscriptions(state:)` (or its worker stops). If it returns or throws while the subscription
/// is still wanted, the runtime runs it again after the retry policy's backoff, resuming after
/// the last event it sent.
///
/// Events are numbered by the runtime from 0 for each run of a subscription; a run that resumes
/// (on another worker, after a restart) is told the index of the last event the authority has
/// applied, and its first event gets the index after it. The handler should resume its source
/// there, so that event `n` means the same thing whichever process sends it: the runtime drops
/// every index it has already applied.
public protocol SubscriptionHandler<Subscription, Action>: Sendable {
    /// The subscriptions this handler runs.
    associatedtype Subscription: Codable & Sendable & Hashable
    /// The actions it sends.
    associatedtype Action: Codable & Sendable

    /// Runs one subscription until cancelled, sending its events through `send`.
    ///
    /// - Parameter lastAppliedEvent: the index of the last event of this run already applied,
    ///   or `nil` when none was: the first event sent now gets `lastAppliedEvent + 1` (or 0).
    func run(_ subscription: Subscription, resumingAfter lastAppliedEvent: UInt64?, send: SubscriptionSender<Action>) async throws
}
