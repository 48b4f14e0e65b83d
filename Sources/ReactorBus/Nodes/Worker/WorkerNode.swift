import Dispatch
import ReactorCore
import ReactorLog
import Synchronization
import ZeroMQ

/// A worker process's node: connects to the authority's workers socket, runs the jobs it is
/// given as Swift tasks (with the configured ``RetryPolicy``) and sends their mutations back.
///
/// ```swift
/// let worker = WorkerNode(reactor: Counter(), effects: CounterEffects(),
///                         configuration: WorkerConfiguration(authorityEndpoint: "tcp://127.0.0.1:7002", appName: "counter"),
///                         logger: Logger(label: "worker"), context: context)
/// try worker.start()
/// ...
/// worker.stop()
/// await worker.wait()
/// ```
///
/// Threads: the handle is `Sendable`; every method may be called from any thread. The socket
/// lives on the node's own thread; effects run on Swift's cooperative pool and hand their
/// encoded mutations to that thread through a mailbox.
///
/// Stopping: the first ``stop()`` is graceful. New jobs are no longer started (nor reported:
/// the closing `bye` makes the authority give them to another worker at once); running effects
/// get ``WorkerConfiguration/stopGracePeriod`` to finish and report; then the worker sends
/// `bye` and closes its socket with a bounded linger. Effects still running at the deadline are
/// cancelled and not reported, so the authority re-dispatches them too. A second `stop()`
/// cancels everything at once and says `bye` right away.
public final class WorkerNode<R: Reactor, Handler: EffectHandler>: Sendable
where Handler.Effect == R.Effect, Handler.Mutation == R.Mutation {
    private enum Phase {
        case idle
        case started(NodeThread)
        /// `stop()` came before `start()`: the node will never run.
        case stoppedBeforeStart
    }

    /// The reactor whose effects the worker runs.
    public let reactor: R
    /// The handler that runs them.
    public let effects: Handler
    /// What the worker connects to and announces.
    public let configuration: WorkerConfiguration
    private let logger: Logger
    private let context: ZMQContext
    private let phase = Mutex(Phase.idle)
    private let stopRequest = WorkerStopRequest()
    private let recorder = WorkerMetricsRecorder()
    private let stopCause = NodeFailure()

    /// Creates a worker that does nothing until ``start()``.
    ///
    /// - Parameters:
    ///   - reactor: the app; its ``Reactor/kind(of:)`` is checked against each job's kind.
    ///   - effects: runs the app's effects.
    ///   - configuration: endpoint, app name, concurrency, heartbeats, retries, limits.
    ///   - logger: where the worker logs; its label is replaced with `worker <name>`.
    ///   - context: the ZeroMQ context the worker's socket is created from.
    public init(reactor: R, effects: Handler, configuration: WorkerConfiguration, logger: Logger, context: ZMQContext) {
        self.reactor = reactor
        self.effects = effects
        self.configuration = configuration
        self.logger = logger.labelled("worker \(configuration.name)")
        self.context = context
    }

    /// Why the worker stopped on its own: a ``ProtocolError`` with code
    /// ``ErrorCode/wrongApp`` when the authority serves another app. `nil` while it runs and
    /// after a stop that was asked for.
    public var failure: (any Error)? { stopCause.error }

    /// A snapshot of the worker's counters; consistent, and safe to read from any thread.
    public var metrics: WorkerMetrics { recorder.snapshot }

    /// Starts the worker's thread, which connects to the authority and sends `ready`.
    ///
    /// Returns once the socket is connecting (ZeroMQ completes the connection, and any
    /// reconnection, in the background). Calling it again, or after ``stop()``, does nothing;
    /// a node whose start failed stays finished (create a new one to retry).
    /// - Throws: ``ZMQError`` if the socket cannot be created or the endpoint is invalid
    ///   (`EINVAL`, `EPROTONOSUPPORT`), or `ETERM` if the context is shut down.
    public func start() throws(ZMQError) {
        let thread = try NodeThread(name: "worker")
        let events = try Mailbox<WorkerJobEvent>.forNode()
        let starting = phase.withLock { phase -> Bool in
            guard case .idle = phase else { return false }
            phase = .started(thread)
            return true
        }
        guard starting else { return }

        let startup = StartupReport()
        let launcher = WorkerJobLauncher<R, Handler>(
            reactor: reactor, runner: EffectRunner(handler: effects, policy: configuration.retry), events: events,
            kinds: configuration.kinds, maxPayloadBytes: configuration.maxMessageBytes, logger: logger)
        let (configuration, logger, context) = (self.configuration, self.logger, self.context)
        let (stopRequest, recorder, stopCause) = (self.stopRequest, self.recorder, self.stopCause)
        thread.start {
            let loop: WorkerLoop<R, Handler>
            do throws(ZMQError) {
                loop = try WorkerLoop(configuration: configuration, logger: logger, context: context, thread: thread,
                                      stopRequest: stopRequest, metrics: recorder, events: events, launcher: launcher,
                                      failure: stopCause)
            } catch {
                startup.finish(error)
                return
            }
            startup.finish(nil)
            loop.run()
        }
        if let error = startup.wait() {
            logger.error("cannot connect to \(configuration.authorityEndpoint): \(error)")
            throw error
        }
    }

    /// Stops the worker: gracefully the first time, at once the second time (see the type's
    /// documentation). Idempotent after that; safe from any thread; returns without waiting
    /// (use ``wait()``).
    public func stop() {
        let thread = phase.withLock { phase -> NodeThread? in
            switch phase {
            case .idle:
                phase = .stoppedBeforeStart
                return nil
            case .started(let thread):
                return thread
            case .stoppedBeforeStart:
                return nil
            }
        }
        guard let thread, !thread.isFinished else { return }
        if stopRequest.request() == 1 {
            thread.stop()
        } else {
            logger.info("stop requested again: cancelling running jobs")
            thread.wakeup.post(())
        }
    }

    /// Returns once the worker's thread has finished (at once if it never started): after a
    /// stop, or after the authority refused the worker's app (`wrong_app`).
    public func wait() async {
        let thread = phase.withLock { phase -> NodeThread? in
            if case .started(let thread) = phase { return thread }
            return nil
        }
        await thread?.wait()
    }
}

/// Hands the outcome of the loop's first connect from the node thread to `start()`.
private final class StartupReport: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Mutex<ZMQError?>(nil)

    func finish(_ error: ZMQError?) {
        outcome.withLock { $0 = error }
        done.signal()
    }

    func wait() -> ZMQError? {
        done.wait()
        return outcome.withLock { $0 }
    }
}
