import Dispatch
import MessagePack
import ReactorCore
import ReactorLog
import Synchronization
import ZeroMQ

/// Follows the authority's state: a stream of snapshots, each newer than the one before.
///
/// A handle over one loop thread that owns a SUB on the feed and a DEALER on the actions socket,
/// and follows the ZeroMQ Guide's Clone pattern: it subscribes first, then fetches the current
/// snapshot on the actions socket and delivers it, then delivers only feed snapshots with a
/// higher version. When two heartbeats in a row show a version it does not hold (it lost a
/// snapshot to the bounded feed queue), when mutation versions jump (with
/// ``ObserverConfiguration/followMutations``) or when the feed is silent for
/// ``ObserverConfiguration/silenceTimeout``, it fetches again. Messages that do not decode are
/// counted in ``metrics`` and dropped.
///
/// The feed's receive queue is bounded (``ObserverConfiguration/receiveHighWaterMark``), so a
/// slow observer never slows the authority: it loses feed messages and catches up by refetching.
///
/// Every method is safe from any thread or task.
public final class Observer<R: Reactor>: Sendable {
    private enum Phase { case idle, running, stopped }

    /// The configuration.
    public let configuration: ObserverConfiguration
    private let logger: Logger
    private let context: ZMQContext
    private let thread: NodeThread
    private let counters = ObserverCounters()
    private let hub: SnapshotHub<R.State>
    private let phase = Mutex(Phase.idle)

    /// Creates an observer; nothing connects until ``start()``.
    ///
    /// - Throws: ``ZMQError`` when descriptors run out.
    public init(configuration: ObserverConfiguration, logger: Logger = Logger(label: "observer"), context: ZMQContext) throws(ZMQError) {
        self.configuration = configuration
        self.logger = logger
        self.context = context
        thread = try NodeThread(name: "observer")
        hub = SnapshotHub(bufferSize: configuration.streamBufferSize, counters: counters) { payload in
            try MessagePackDecoder().decode(R.State.self, from: payload)
        }
    }

    deinit {
        stop()
    }

    /// What the observer has seen so far.
    public var metrics: ObserverMetrics { counters.metrics }

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
        let starting = phase.withLock { phase -> Bool in
            guard phase == .idle else { return false }
            phase = .running
            return true
        }
        guard starting else { return }
        let setup = Mutex<ZMQError?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let (configuration, logger, context, thread, hub, counters) = (configuration, logger, context, thread, hub, counters)
        thread.start {
            let loop: ObserverLoop<R.State>
            do throws(ZMQError) {
                loop = try ObserverLoop(configuration: configuration, logger: logger, context: context, thread: thread,
                                        hub: hub, counters: counters)
            } catch {
                hub.finish()
                setup.withLock { $0 = error }
                ready.signal()
                return
            }
            ready.signal()
            logger.debug("following \(configuration.feedEndpoint), fetching from \(configuration.actionsEndpoint)")
            loop.run()
        }
        ready.wait()
        if let error = setup.withLock({ $0 }) { throw error }
    }

    /// Stops the observer: the loop closes its sockets and every stream ends. Idempotent; safe
    /// from any thread. Use ``wait()`` to know when it is done.
    public func stop() {
        let previous = phase.withLock { phase -> Phase in
            defer { phase = .stopped }
            return phase
        }
        thread.stop()
        if previous == .idle { hub.finish() }
    }

    /// Returns once the loop thread has closed its sockets (at once if it never started).
    public func wait() async {
        await thread.wait()
    }
}
