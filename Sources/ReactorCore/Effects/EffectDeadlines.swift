/// A service that runs an action once a deadline has passed, unless it was cancelled first:
/// what ``EffectRunner`` needs to time out an attempt without a timer task of its own.
///
/// ReactorCore has no threads, so it only states the contract; a runtime that runs many effects
/// (the worker node) supplies one clock for all of them. Without one, the runner times each
/// attempt with a child task that sleeps (see ``EffectRunner``).
///
/// Contract: `action` runs at most once, never before `delay` has passed, on a thread of the
/// service's choosing, and it must be quick (it runs while other deadlines wait). When
/// ``cancel(_:)`` returns `true` the action never runs; `false` means it has begun already (or
/// the token was cancelled before), and cancelling changes nothing.
public protocol EffectDeadlines: Sendable {
    /// Arranges for `action` to run once `delay` has passed; the token cancels it.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> EffectDeadlineToken
    /// Forgets the deadline `token` names, if its action has not begun yet; returns whether it
    /// did (a deadline can pass while its caller is on the way to cancel it).
    @discardableResult
    func cancel(_ token: EffectDeadlineToken) -> Bool
}

/// Names one scheduled deadline for ``EffectDeadlines/cancel(_:)``.
///
/// Both numbers belong to the service that issued the token: `id` tells the deadline apart
/// from every other, `slot` says where the service keeps it, so that cancelling needs no search.
public struct EffectDeadlineToken: Sendable, Hashable {
    /// The deadline's number, unique within its service.
    public let id: UInt64
    /// Where the service keeps the deadline.
    public let slot: Int

    /// Creates a token; only a service that schedules deadlines has a reason to.
    public init(id: UInt64, slot: Int) {
        self.id = id
        self.slot = slot
    }
}
