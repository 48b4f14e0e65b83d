import ReactorCore
import ReactorLog
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
/// encoded mutations to that thread through a mailbox. The retry policy's per-attempt timeouts
/// are kept by one ``DeadlineWheel`` per started worker, on a thread of its own that sleeps
/// while no attempt is timed: a job is then two tasks (the job and its attempt) and no timer.
///
/// Stopping: the first ``stop()`` is graceful. New jobs are no longer started (nor reported:
/// the closing `bye` makes the authority give them to another worker at once); running effects
/// get ``WorkerConfiguration/stopGracePeriod`` to finish and report; then the worker sends
/// `bye` and closes its socket with a bounded linger. Effects still running at the deadline are
/// cancelled and not reported, so the authority re-dispatches them too. A second `stop()`
/// cancels everything at once and says `bye` right away.
///
/// Several authorities: with a comma-separated ``WorkerConfiguration/authorityEndpoint`` the worker
/// registers with one at a time; when it misses its heartbeats it moves to the next and says
/// `ready` there (``WorkerMetrics/failovers``), dropping its running jobs for the new authority to
/// re-dispatch.
///
/// As a service, `try await worker.run()` starts it and returns when it stops; cancelling the
/// task is the graceful stop.
public final class WorkerNode<R: Reactor, Handler: EffectHandler>: Sendable
where Handler.Effect == R.Effect, Handler.Mutation == R.Mutation {
    /// The reactor whose effects the worker runs.
    public let reactor: R
    /// The handler that runs them.
    public let effects: Handler
    /// What the worker connects to and announces.
    public let configuration: WorkerConfiguration
    /// Runs the reactor's subscriptions; `nil` when the worker runs none.
    public let subscriptions: (any SubscriptionHandler<R.Subscription, R.Action>)?
    private let logger: Logger
    private let context: ZMQContext
    private let runtime = NodeRuntime(name: "worker")
    private let recorder = NodeMetrics(WorkerMetrics())

    /// Creates a worker that does nothing until ``start()``.
    ///
    /// - Parameters:
    ///   - reactor: the app; its ``Reactor/kind(of:)`` is checked against each job's kind.
    ///   - effects: runs the app's effects.
    ///   - configuration: endpoint, app name, concurrency, heartbeats, retries, limits.
    ///   - logger: where the worker logs; its label is replaced with `worker <name>`.
    ///   - context: the ZeroMQ context the worker's socket is created from.
    public convenience init(reactor: R, effects: Handler, configuration: WorkerConfiguration, logger: Logger, context: ZMQContext) {
        self.init(reactor: reactor, effects: effects, subscriptions: nil, configuration: configuration, logger: logger, context: context)
    }

    /// Creates a worker that also runs the reactor's subscriptions (of the configured kinds): it
    /// tells the authority so after each `ready`, and runs each run it is given as a task until
    /// the authority stops it or the session ends.
    ///
    /// - Parameters:
    ///   - subscriptions: runs the app's subscriptions; `nil` runs none. Its backoff between
    ///     runs of a handler that ended is the configuration's retry policy's.
    public init(reactor: R, effects: Handler, subscriptions: (any SubscriptionHandler<R.Subscription, R.Action>)?,
                configuration: WorkerConfiguration, logger: Logger, context: ZMQContext) {
        self.reactor = reactor
        self.effects = effects
        self.subscriptions = subscriptions
        self.configuration = configuration
        self.logger = logger.labelled("worker \(configuration.name)")
        self.context = context
    }

    /// Why the worker stopped on its own: a ``ProtocolError`` with code
    /// ``ErrorCode/wrongApp`` when the authority serves another app. `nil` while it runs and
    /// after a stop that was asked for.
    public var failure: (any Error)? { runtime.failure.error }

    /// A snapshot of the worker's counters; consistent, and safe to read from any thread.
    public var metrics: WorkerMetrics { recorder.value }

    /// Starts the worker's thread, which connects to the authority and sends `ready`.
    ///
    /// Returns once the socket is connecting (ZeroMQ completes the connection, and any
    /// reconnection, in the background). Calling it again, or after ``stop()``, does nothing;
    /// a node whose start failed stays finished (create a new one to retry).
    /// - Throws: ``ZMQError`` if the socket cannot be created or the endpoint is invalid
    ///   (`EINVAL`, `EPROTONOSUPPORT`), or `ETERM` if the context is shut down.
    public func start() throws(ZMQError) {
        // Stopped before it started: it will never run.
        guard !runtime.isStopping, !runtime.hasStarted else { return }
        let events = try Mailbox<WorkerJobEvent>.forNode()
        let executor = configuration.effectThreads == .loop ? try LoopEffectExecutor() : nil
        let clock = try LoopClock()
        let launcher = WorkerJobLauncher<R, Handler>(
            reactor: reactor, runner: EffectRunner(handler: effects, policy: configuration.retry, deadlines: DeadlineWheel(name: "deadlines"),
                                                   executor: executor, reusableTasks: configuration.reusableTasks, clock: clock),
            events: events,
            kinds: configuration.kinds, maxPayloadBytes: configuration.maxMessageBytes, logger: logger)
        let subscriptionLauncher = subscriptions.map { [reactor, configuration, logger] in
            WorkerSubscriptionLauncher<R>(reactor: reactor, runner: SubscriptionRunner(handler: $0, policy: configuration.retry, clock: clock), events: events,
                                          maxPayloadBytes: configuration.maxMessageBytes, logger: logger)
        }
        let (configuration, logger, context, recorder) = (self.configuration, self.logger, self.context, self.recorder)
        do throws(ZMQError) {
            _ = try runtime.start(mailboxFailure: { $0 }) { runtime, poller throws(ZMQError) in
                try WorkerLoop(configuration: configuration, logger: logger, context: context, runtime: runtime, poller: poller,
                               metrics: recorder, events: events, executor: executor, clock: clock, launcher: launcher,
                               subscriptionLauncher: subscriptionLauncher)
            } run: { $0.run() }
        } catch {
            logger.error("cannot connect to \(configuration.authorityEndpoint): \(error)")
            throw error
        }
    }

    /// Runs the worker as a service: starts it, returns once it has stopped; cancelling the
    /// task is the first, graceful ``stop()``.
    ///
    /// - Throws: what ``start()`` throws; then ``failure``, when the worker stopped on its own.
    public func run() async throws {
        try start()
        await runtime.serve { [self] in stop() }
        if let failure { throw failure }
    }

    /// Stops the worker: gracefully the first time, at once the second time (see the type's
    /// documentation). Idempotent after that; safe from any thread; returns without waiting
    /// (use ``wait()``).
    public func stop() {
        guard !runtime.isFinished else { return }
        if runtime.stop() > 1, runtime.hasStarted {
            logger.info("stop requested again: cancelling running jobs")
        }
    }

    /// Returns once the worker's thread has finished (at once if it never started): after a
    /// stop, or after the authority refused the worker's app (`wrong_app`).
    public func wait() async {
        await runtime.wait()
    }
}
