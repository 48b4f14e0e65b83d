import ReactorCore
import ReactorLog
import Synchronization
import ZeroMQ

/// The node that owns the state: accepts actions, dispatches effects to workers, applies their
/// mutations in order, journals, and publishes the feed.
///
/// All sockets live on the node's own thread (see ``NodeThread``); this handle is `Sendable`
/// and may be used from anywhere to start, stop, wait and read metrics.
///
/// ```swift
/// let node = AuthorityNode(reactor: Counter(), configuration: config, logger: logger, context: context)
/// let endpoints = try await node.start()
/// // ...
/// node.stop()
/// await node.wait()
/// ```
public final class AuthorityNode<R: Reactor>: Sendable {
    /// The endpoints the node bound, with real ports where an ephemeral one was asked for.
    public struct Endpoints: Sendable, Equatable {
        public var actions: String
        public var workers: String
        public var feed: String
    }

    private let reactor: R
    private let configuration: AuthorityConfiguration
    private let logger: Logger
    private let context: ZMQContext
    private let thread: NodeThread
    private let latestMetrics = Mutex(AuthorityMetrics())
    private let stopCause = NodeFailure()

    /// Creates a node; nothing is bound until ``start()``.
    public init(reactor: R, configuration: AuthorityConfiguration, logger: Logger, context: ZMQContext) throws(ZMQError) {
        self.reactor = reactor
        self.configuration = configuration
        self.logger = logger
        self.context = context
        self.thread = try NodeThread(name: "authority")
    }

    /// Recovers state (with a data directory), binds the sockets and starts serving.
    ///
    /// - Returns: the bound endpoints, once the node is ready.
    /// - Throws: a ``ZMQError`` for an endpoint that cannot be bound, a ``PersistenceError`` for a
    ///   data directory that cannot be used; the node is then not running.
    public func start() async throws -> Endpoints {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Endpoints, any Error>) in
            let started = thread.start { [self] in
                let loop: AuthorityLoop<R>
                do {
                    loop = try AuthorityLoop(reactor: reactor, configuration: configuration, logger: logger, context: context, thread: thread,
                                             failure: stopCause) { snapshot in
                        self.latestMetrics.withLock { $0 = snapshot }
                    }
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                continuation.resume(returning: loop.endpoints)
                loop.run()
            }
            if !started { continuation.resume(throwing: NodeError.alreadyStarted("authority")) }
        }
    }

    /// Stops taking new messages, finishes the batch in hand, writes a final snapshot (with a
    /// data directory), closes the sockets. Idempotent; safe from any thread.
    public func stop() { thread.stop() }

    /// Returns once the node has stopped.
    public func wait() async { await thread.wait() }

    /// Why the node stopped on its own, e.g. a ``PersistenceError`` when its journal could not be
    /// written (a full disk); `nil` while it runs and after a stop that was asked for. A node
    /// that stops on its own has acknowledged nothing it could not journal.
    public var failure: (any Error)? { stopCause.error }

    /// Counters and gauges as of the last loop turn.
    public var metrics: AuthorityMetrics { latestMetrics.withLock { $0 } }
}
