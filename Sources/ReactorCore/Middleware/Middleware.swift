/// Sees every applied mutation together with the state after it; cannot change the state.
///
/// Middleware is the seed ReactorSwift's hook for logging, metrics and analytics. It is called
/// synchronously, in application order, on whatever thread applies mutations, so it must be
/// quick and must not block.
public protocol Middleware<Base>: Sendable {
    /// The reactor whose mutations this middleware observes.
    associatedtype Base: Reactor

    /// Called after `applied` was reduced into `state`.
    func didApply(_ applied: AppliedMutation<Base.Mutation>, state: Base.State)
}
