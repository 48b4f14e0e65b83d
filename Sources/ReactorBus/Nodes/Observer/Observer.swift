import MessagePack
import ReactorCore
import ReactorLog
import ZeroMQ

/// Follows the authority's state: a stream of snapshots, each newer than the one before.
///
/// A handle over one loop thread that owns a SUB on the feed and a DEALER on the actions socket,
/// and follows the ZeroMQ Guide's Clone pattern: it subscribes first, then fetches the current
/// snapshot on the actions socket (in chunks of a bounded size, so a state of any size arrives)
/// and delivers it. Then:
///
/// - created with the reactor (``init(reactor:configuration:logger:context:)``), it follows the
///   feed's mutations and applies each with the reactor's own `reduce` on top of the fetched
///   state, so it holds the exact state at every version at a cost per mutation, not per state
///   size; it delivers the state after each batch of mutations it receives (for a large state,
///   spaced so that copying the delivered state takes at most a tenth of the time: a delivery is
///   shared with the streams, so the next mutation copies it), and fetches again on a gap in
///   versions;
/// - created without it, it delivers feed snapshots with a higher version than the one held
///   (the authority publishes them on a schedule, see ``FeedSnapshotPolicy``).
///
/// When two heartbeats in a row show a version it does not hold (it lost messages to the
/// bounded feed queue), when mutation versions jump (with the reactor, or with
/// ``ObserverConfiguration/followMutations``) or when the feed is silent for
/// ``ObserverConfiguration/silenceTimeout``, it fetches again. Messages that do not decode are
/// counted in ``metrics`` and dropped.
///
/// With several authorities (comma-separated endpoints, see ``ObserverConfiguration/feedEndpoint``)
/// a silent feed moves the observer to the next authority's feed and actions endpoints, where it
/// fetches the state again; versions delivered still only grow.
///
/// The feed's receive queue is bounded (``ObserverConfiguration/receiveHighWaterMark``), so a
/// slow observer never slows the authority: it loses feed messages and catches up by refetching.
///
/// Every method is safe from any thread or task.
public final class Observer<R: Reactor>: Sendable {
    /// The configuration.
    public let configuration: ObserverConfiguration
    private let logger: Logger
    private let context: ZMQContext
    private let runtime = NodeRuntime(name: "observer")
    private let counters = NodeMetrics(ObserverMetrics())
    private let hub: SnapshotHub<R.State>
    private let follower: MutationFollower<R.State>?

    /// Creates an observer that follows feed snapshots; nothing connects until ``start()``.
    ///
    /// - Throws: ``ZMQError`` when descriptors run out.
    public convenience init(configuration: ObserverConfiguration, logger: Logger = Logger(label: "observer"), context: ZMQContext) throws(ZMQError) {
        try self.init(follower: nil, configuration: configuration, logger: logger, context: context)
    }

    /// Creates an observer that keeps the state itself: it applies every feed mutation with
    /// `reactor`'s `reduce` on top of the last fetched snapshot (the reactor must be the
    /// authority's, or reduce the same way). Nothing connects until ``start()``.
    ///
    /// - Throws: ``ZMQError`` when descriptors run out.
    public convenience init(reactor: R, configuration: ObserverConfiguration, logger: Logger = Logger(label: "observer"), context: ZMQContext) throws(ZMQError) {
        try self.init(follower: MutationFollower<R.State>.reducing(with: reactor), configuration: configuration, logger: logger, context: context)
    }

    private init(follower: MutationFollower<R.State>?, configuration: ObserverConfiguration, logger: Logger, context: ZMQContext) throws(ZMQError) {
        self.configuration = configuration
        self.logger = logger
        self.context = context
        self.follower = follower
        try runtime.prepare()
        hub = SnapshotHub(bufferSize: configuration.streamBufferSize, counters: counters, decode: Self.decodeState) { state in
            try MessagePackEncoder().encode(state)
        }
    }

    private static func decodeState(_ payload: [UInt8]) throws -> R.State {
        try MessagePackDecoder().decode(R.State.self, from: payload)
    }

    deinit {
        stop()
    }

    /// What the observer has seen so far.
    public var metrics: ObserverMetrics { counters.value }

    /// A new subscription: the current snapshot (the one fetched from the authority, or a newer
    /// one if the observer has been running), then every newer snapshot.
    ///
    /// Versions strictly increase. The stream buffers at most
    /// ``ObserverConfiguration/streamBufferSize`` snapshots for a consumer that falls behind and
    /// then drops the oldest (bounded-newest): each snapshot is the whole state, so nothing but
    /// intermediate versions is lost. The stream ends when the observer stops; a subscription
    /// made after that ends at once. A snapshot whose state does not decode as `R.State` is
    /// counted as malformed and skipped.
    public func snapshots() -> AsyncStream<Snapshot<R.State>> {
        hub.typedStream()
    }

    /// Like ``snapshots()``, but with the state as the MessagePack bytes the authority sent
    /// (for tools that print JSON without knowing the app's types).
    public func rawSnapshots() -> AsyncStream<(version: UInt64, actionSeq: UInt64, payload: [UInt8])> {
        hub.rawStream()
    }

    /// Starts the loop thread, which subscribes, connects and fetches the first snapshot.
    ///
    /// Returns once the sockets are connecting. Calling it again, or after ``stop()``, does nothing.
    /// - Throws: ``ZMQError`` when a socket cannot be created or an endpoint is invalid.
    public func start() throws(ZMQError) {
        guard !runtime.isStopping else { return }
        let (configuration, logger, context, hub, counters, follower) = (configuration, logger, context, hub, counters, follower)
        do throws(ZMQError) {
            _ = try runtime.start(mailboxFailure: { $0 }) { runtime, poller throws(ZMQError) in
                try ObserverLoop(configuration: configuration, logger: logger, context: context, runtime: runtime, poller: poller,
                                 hub: hub, counters: counters, follower: follower, decodeState: Self.decodeState)
            } run: { $0.run() }
        } catch {
            hub.finish()
            throw error
        }
    }

    /// Runs the observer as a service: starts it, returns once it has stopped; cancelling the
    /// task stops it like ``stop()``.
    ///
    /// - Throws: what ``start()`` throws.
    public func run() async throws {
        try start()
        await runtime.serve { [self] in stop() }
    }

    /// Stops the observer: the loop closes its sockets and every stream ends. Idempotent; safe
    /// from any thread. Use ``wait()`` to know when it is done.
    public func stop() {
        runtime.stop()
        // A loop ends the streams when it stops; without one (never started), end them here.
        if !runtime.hasStarted { hub.finish() }
    }

    /// Why the observer stopped on its own: a ``ProtocolError`` with code ``ErrorCode/wrongApp``
    /// when ``ObserverConfiguration/appName`` is set and the authority serves another app. `nil`
    /// while it runs and after a stop that was asked for.
    public var failure: (any Error)? { runtime.failure.error }

    /// Returns once the loop thread has closed its sockets (at once if it never started).
    public func wait() async {
        await runtime.wait()
    }
}
