/// What a node runs on its thread (see ``NodeRuntime``): the authority's, a worker's, a
/// client's and an observer's loop.
///
/// A loop is built on the node's thread (its sockets are created there and never leave it), so
/// it need not be `Sendable`; only its ``ready`` value crosses back to the caller of `start()`.
protocol NodeLoop: AnyObject {
    /// What `start()` learns once the loop is built: the authority's bound endpoints; nothing
    /// for the other nodes.
    associatedtype Ready: Sendable = Void

    /// The value reported to `start()`.
    var ready: Ready { get }

    /// Runs turns (see ``NodePoller``) until the runtime is asked to stop or a fatal error, then
    /// closes the loop's sockets and answers what it holds.
    func run()
}

extension NodeLoop where Ready == Void {
    var ready: Void { () }
}
