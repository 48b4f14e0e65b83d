import ReactorCore
import ReactorLog
import ZeroMQ

/// The node that owns the state: accepts actions, dispatches effects to workers, applies their
/// mutations in order, journals, and publishes the feed.
///
/// All sockets live on the node's own thread (see ``NodeRuntime``); this handle is `Sendable`
/// and may be used from anywhere to start, stop, wait and read metrics.
///
/// ```swift
/// let node = AuthorityNode(reactor: Counter(), configuration: config, logger: logger, context: context)
/// let endpoints = try await node.start()
/// // ...
/// node.stop()
/// await node.wait()
/// ```
///
/// Or as a service: `try await node.run()` starts it, returns when it stops, stops it
/// gracefully when the task is cancelled, and throws ``failure`` if it stopped on its own.
public final class AuthorityNode<R: Reactor>: Sendable {
    /// The endpoints the node bound, with real ports where an ephemeral one was asked for.
    ///
    /// A standby binds none of them until promoted: then `actions`, `workers` and `feed` are
    /// empty and ``standbyOf`` names the primary it follows; ``promote()`` returns the bound ones.
    public struct Endpoints: Sendable, Equatable {
        public var actions: String
        public var workers: String
        public var feed: String
        /// Where standbys connect (`--replication`), when this node serves them.
        public var replication: String? = nil
        /// The primary this node follows while it is a standby.
        public var standbyOf: String? = nil
    }

    private let reactor: R
    private let configuration: AuthorityConfiguration
    private let logger: Logger
    private let context: ZMQContext
    private let runtime = NodeRuntime(name: "authority")
    private let latestMetrics = NodeMetrics(AuthorityMetrics())
    private let promotion: Promotion<Endpoints>

    /// Creates a node; nothing is bound until ``start()``.
    public init(reactor: R, configuration: AuthorityConfiguration, logger: Logger, context: ZMQContext) throws(ZMQError) {
        self.reactor = reactor
        self.configuration = configuration
        self.logger = logger
        self.context = context
        promotion = try Promotion()
        try runtime.prepare()
    }

    /// Recovers state (with a data directory), binds the sockets and starts serving.
    ///
    /// - Returns: the bound endpoints, once the node is ready.
    /// - Throws: a ``ZMQError`` for an endpoint that cannot be bound, a ``PersistenceError`` for a
    ///   data directory that cannot be used; the node is then not running.
    ///
    /// A standby (``ReplicationConfiguration/standbyOf``) recovers its own data directory and
    /// connects to its primary; it binds nothing else until ``promote()``.
    public func start() async throws -> Endpoints {
        let (reactor, configuration, logger, context, metrics, promotion) = (reactor, configuration, logger, context, latestMetrics, promotion)
        if let primary = configuration.replication?.standbyOf {
            let startup = try await runtime.start { runtime, poller in
                try StandbyLoop(reactor: reactor, configuration: configuration, primary: primary, logger: logger, context: context,
                                runtime: runtime, poller: poller, metrics: metrics, promotion: promotion)
            } run: { $0.run() }
            guard case .ready(let endpoints) = startup else { throw NodeError.alreadyStarted("authority") }
            return endpoints
        }
        let startup = try await runtime.start { runtime, poller in
            try AuthorityLoop(reactor: reactor, configuration: configuration, logger: logger, context: context,
                              runtime: runtime, poller: poller, metrics: metrics)
        } run: { $0.run() }
        guard case .ready(let endpoints) = startup else { throw NodeError.alreadyStarted("authority") }
        promotion.finish(.success(endpoints))
        return endpoints
    }

    /// Makes a standby the primary (manual failover, or an election's callback): it stops
    /// following, commits its journal, and serves actions, workers and the feed on its own
    /// endpoints with the exact state and client ledger it followed; open jobs go to the workers
    /// that register. On a node that is already primary it returns its endpoints.
    ///
    /// - Returns: the endpoints it now serves.
    /// - Throws: ``ReplicationError/notPromoted(_:)`` when the node stopped (or failed) first.
    public func promote() async throws -> Endpoints {
        guard runtime.hasStarted else { throw ReplicationError.notPromoted("the node was not started") }
        return try await promotion.request()
    }

    /// Runs the node as a service: starts it, returns once it has stopped; cancelling the task
    /// stops it like ``stop()``.
    ///
    /// - Throws: what ``start()`` throws; then ``failure``, when the node stopped on its own.
    public func run() async throws {
        _ = try await start()
        await runtime.serve { [self] in stop() }
        if let failure { throw failure }
    }

    /// Stops taking new messages, finishes the batch in hand, writes a final snapshot (with a
    /// data directory), closes the sockets. Idempotent; safe from any thread.
    public func stop() { runtime.stop() }

    /// Returns once the node has stopped.
    public func wait() async { await runtime.wait() }

    /// Why the node stopped on its own, e.g. a ``PersistenceError`` when its journal could not be
    /// written (a full disk); `nil` while it runs and after a stop that was asked for. A node
    /// that stops on its own has acknowledged nothing it could not journal.
    public var failure: (any Error)? { runtime.failure.error }

    /// Counters and gauges as of the last loop turn.
    public var metrics: AuthorityMetrics { latestMetrics.value }
}
