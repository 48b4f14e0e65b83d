/// Cancellation's defaults: no effect is cancellable, and a cancelled one applies nothing.
extension Reactor {
    public func cancelID(for effect: Effect) -> CancelID? { nil }

    public func cancelsInFlight(_ effect: Effect) -> Bool { false }

    public func cancelled(effect: Effect) -> [Mutation] { [] }
}
