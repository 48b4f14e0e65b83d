import ReactorCore
import ReactorLog
import ReactorWire
import ZeroMQ

/// The worker's event loop: owns the DEALER socket and runs on the node's thread.
///
/// Threads: the loop is created, used and dropped on the node's thread only (see
/// ``NodeRuntime``; it is not `Sendable`, and neither is its socket). Effect tasks reach it
/// through ``events``; `stop()` reaches it through the runtime (its wakeup and stop count).
///
/// One turn: check stop and timers (heartbeat due, authority silent), flush queued sends, poll
/// the socket and the mailboxes, read what arrived (jobs start their tasks), run the effect
/// slices waiting for this thread (and, in up to ``sliceRounds`` rounds, those they enqueue),
/// then handle the job events and send the reports. Messages
/// from the authority are handled in `WorkerLoop+Authority.swift`, jobs and their events in
/// `WorkerLoop+Jobs.swift`.
final class WorkerLoop<R: Reactor, Handler: EffectHandler>: NodeLoop
where Handler.Effect == R.Effect, Handler.Mutation == R.Mutation {
    /// How long the socket may flush `bye` and the last results after a graceful stop.
    static var stopLinger: Int { 1_000 }
    /// The longest a turn waits while sends are queued behind a full pipe.
    static var retrySendMilliseconds: UInt64 { 10 }
    /// Messages read from the socket per turn, so the mailboxes are served under load.
    static var receiveBatch: Int { 256 }
    /// Rounds of effect slices a turn runs at most (see ``runEffectSlicesInRounds()``).
    static var sliceRounds: Int { 4 }

    // The state touched for every job (`running`, `queued`, `nextRun`, `tally`, `reports`,
    // `pendingReports`, `pendingReportBytes`, `unsent`, `lastSent`, `lastHeard`, `sliceWatch`,
    // `effectsOnLoop`, `slices`, `nextSlices`, `jobEvents`) is `@exclusivity(unchecked)`: the
    // run-time check of each access to a class's stored property (a thread-local access set) was
    // about 3% of a worker's samples. Safe because the loop is not `Sendable` and only its thread
    // uses it, and no access to one of these properties can overlap another to the same one: no
    // method hands a closure to a method of one of them, or to a drain into one of them, that
    // reaches the same property (`reports.close` reads `running`; `sliceWatch` is given the
    // clock; a drain into `slices` runs the socket's reads, one into `nextSlices` runs `slices`,
    // one into `jobEvents` runs the rounds, which use only the two slice arrays), and the effect
    // code that runs on this thread between socket reads (``LoopEffectExecutor``) holds no
    // reference to the loop: it posts to ``events``. The compiler still checks every access it
    // can see statically.
    let configuration: WorkerConfiguration
    let logger: Logger
    let context: ZMQContext
    let runtime: NodeRuntime
    let metrics: NodeMetrics<WorkerMetrics>
    let events: Mailbox<WorkerJobEvent>
    /// Where effect tasks run while they keep to short slices (``EffectThreads/loop``); `nil`
    /// when they run on the shared pool from the start.
    let executor: LoopEffectExecutor?
    /// What effects and subscriptions sleep on; this loop wakes them (see ``LoopClock``).
    let clock: LoopClock
    /// The clock's wake-up mailbox's item.
    var clockItem = 0
    /// Whether effects still run on this loop: set false, for good, when the watch moves them.
    @exclusivity(unchecked) var effectsOnLoop: Bool
    /// Times the loop's effect slices (see ``EffectSliceWatch``).
    @exclusivity(unchecked) var sliceWatch = EffectSliceWatch()
    /// The effect slices of a turn's round, the next round's, and the job events of a turn, as
    /// drained from their mailboxes: kept from turn to turn, so that a mailbox and the loop
    /// swap arrays that have grown to the bursts, and a drain allocates nothing.
    @exclusivity(unchecked) var slices: [UnownedJob] = []
    @exclusivity(unchecked) var nextSlices: [UnownedJob] = []
    @exclusivity(unchecked) var jobEvents: [WorkerJobEvent] = []
    let launcher: WorkerJobLauncher<R, Handler>
    /// Starts subscription runs; `nil` when the worker runs none.
    let subscriptionLauncher: WorkerSubscriptionLauncher<R>?
    /// Subscription runs whose task is running, by run number (`run` of the entry: its token).
    var subscriptionRuns: [UInt64: WorkerSubscriptionRun] = [:]
    let writer = HeaderWriter()
    /// The array the last `jobs` message was read into, kept for the next one.
    var spareJobs: [JobBatch.Entry] = []

    var socket: ZMQSocket
    var poller: NodePoller
    /// The workers endpoints; the socket is connected to the current one.
    var endpoints: AuthorityEndpoints
    /// The terms authorities answered with (see ``AuthorityTermWatch``).
    var terms = AuthorityTermWatch()
    var socketItem = 0
    var eventsItem = 0
    /// The slices mailbox's item, while effects run on this loop.
    var slicesItem: Int?

    /// The heartbeat interval in force: the configured one until `welcome` names another.
    var heartbeatMilliseconds: UInt64
    @exclusivity(unchecked) var lastSent: UInt64 = 0
    @exclusivity(unchecked) var lastHeard: UInt64 = 0
    /// When the current `ready` was sent; `nil` once `welcome` answered it.
    var readySentAt: UInt64?
    /// Frames libzmq could not take yet (the pipe was full), oldest first.
    @exclusivity(unchecked) var unsent: [[[UInt8]]] = []
    /// Counted since it was last added to the metrics (once per turn, see ``WorkerTurnTally``).
    @exclusivity(unchecked) var tally = WorkerTurnTally()

    @exclusivity(unchecked) var running: [JobID: WorkerRunningJob] = [:]
    /// Whether the authority of this session reads a `done` that carries the job's last
    /// mutation (it said so in a `heartbeat`; see ``AuthorityFeature``).
    var authorityReadsDoneWithEmit = false
    /// Whether this session's `features` went out (once its authority named
    /// ``AuthorityFeature/jobBatches``).
    var toldFeatures = false
    /// Whether the authority of this session reads `reports` messages (it named
    /// ``AuthorityFeature/reportBatches``): the turn's reports then leave together.
    var authorityReadsReportBatches = false
    /// This turn's reports not sent yet, and the bytes they add to a `reports` body at most.
    @exclusivity(unchecked) var pendingReports: [WorkerMessage] = []
    @exclusivity(unchecked) var pendingReportBytes = 0
    /// The current batch of job events' held emits, when the authority reads a `done` with the
    /// job's last mutation (see ``ReportBatch``).
    @exclusivity(unchecked) var reports = ReportBatch()
    @exclusivity(unchecked) var queued = WorkerJobQueue()
    @exclusivity(unchecked) var nextRun: UInt64 = 0
    /// Set when a graceful stop began: the moment it gives up waiting for running jobs.
    var drainDeadline: UInt64?
    /// Set when the worker can never work (`wrong_app`): the loop ends at the next turn.
    var fatal = false
    /// Where the reason for such an end goes, for whoever waits for the node.
    var failure: NodeFailure { runtime.failure }

    /// Creates the loop and its first socket, connects, and sends `ready`.
    ///
    /// - Throws: ``ZMQError`` when the socket cannot be created or the endpoint is invalid.
    init(configuration: WorkerConfiguration, logger: Logger, context: ZMQContext, runtime: NodeRuntime, poller: NodePoller,
         metrics: NodeMetrics<WorkerMetrics>, events: Mailbox<WorkerJobEvent>, executor: LoopEffectExecutor? = nil, clock: LoopClock,
         launcher: WorkerJobLauncher<R, Handler>, subscriptionLauncher: WorkerSubscriptionLauncher<R>? = nil) throws(ZMQError) {
        self.configuration = configuration
        self.logger = logger
        self.context = context
        self.runtime = runtime
        self.metrics = metrics
        self.events = events
        self.executor = executor
        self.clock = clock
        let effectsOnLoop = executor != nil
        self.effectsOnLoop = effectsOnLoop
        metrics.update { $0.effectsOnLoopThread = effectsOnLoop }
        self.launcher = launcher
        self.subscriptionLauncher = subscriptionLauncher
        self.heartbeatMilliseconds = max(1, configuration.heartbeatInterval.wholeMilliseconds)
        if let problem = AuthorityEndpoints.problem(in: configuration.authorityEndpoint, setting: "authorityEndpoint") {
            logger.error("\(problem)")
            throw ZMQError(code: ZMQError.Code.invalidArgument, function: "zmq_connect", endpoint: configuration.authorityEndpoint)
        }
        self.endpoints = AuthorityEndpoints(configuration.authorityEndpoint)
        self.socket = try Self.makeSocket(context: context, configuration: configuration, endpoint: endpoints.current)
        self.poller = poller
        try attach(socket, to: poller)
        logger.info("connecting to \(endpoints.current) as '\(configuration.name)' (app \(configuration.appName), capacity \(configuration.capacity): \(configuration.concurrency) running, \(configuration.prefetchedJobs) waiting)")
        try sendReady()
    }

    /// Runs turns until the worker stops, then says `bye` and closes the socket.
    func run() {
        // Tasks cancelled by the stop, and any resumed later, finish on the pool: none is stranded;
        // the tasks kept for later jobs end.
        defer {
            launcher.runner.retireIdleTasks()
            executor?.moveToPool()
            clock.close()
        }
        var graceful = true
        while true {
            do {
                guard let outcome = try turn() else { continue }
                graceful = outcome
                break
            } catch {
                if error.isTerminated {
                    logger.error("the ZeroMQ context was terminated; the worker stops without saying bye")
                    abandonAll()
                    publishTally()
                    socket.close()
                    return
                }
                logger.error("transport error: \(error); reconnecting")
                do {
                    try replaceSocket()
                } catch {
                    logger.error("cannot reconnect: \(error); the worker stops")
                    abandonAll()
                    publishTally()
                    socket.close()
                    return
                }
            }
        }
        finish(graceful: graceful)
    }

    /// One turn; returns `nil` to go on, or whether the stop was graceful.
    private func turn() throws(ZMQError) -> Bool? {
        var now = MonotonicClock.milliseconds()
        if fatal || runtime.isStoppingAtOnce {
            return false
        }
        if runtime.isStopping && drainDeadline == nil {
            beginDrain(now: now)
        }
        if let deadline = drainDeadline {
            if running.isEmpty { return true }
            if now >= deadline {
                logger.warning("stop grace period over: cancelling \(running.count) running job\(running.count == 1 ? "" : "s"); the authority will re-dispatch them")
                return false
            }
        }
        let silence = heartbeatMilliseconds * UInt64(configuration.missedHeartbeats)
        if Self.elapsed(since: lastHeard, now: now) >= silence {
            try reconnect(silentFor: Self.elapsed(since: lastHeard, now: now))
            now = MonotonicClock.milliseconds()
        }
        try flushUnsent()
        // Anything queued counts as traffic: a heartbeat is only due on an idle connection.
        if unsent.isEmpty && Self.elapsed(since: lastSent, now: now) >= heartbeatMilliseconds {
            try send(.heartbeat)
        }

        let nextSend = unsent.isEmpty ? lastSent &+ heartbeatMilliseconds : now &+ Self.retrySendMilliseconds
        try poller.wait(until: min(nextSend, lastHeard &+ silence, drainDeadline ?? .max), longest: .max, orUntilNanosecond: clock.nextWake())
        if poller.isReadable(clockItem) { _ = clock.wake.drain() }

        let received = poller.receive(socket, at: socketItem, batch: Self.receiveBatch)
        if effectsOnLoop, let executor {
            // The tasks of the jobs read now, and those whose sleep ended, enqueue their slices
            // without waking this loop (it runs them next), as do the slices other threads
            // resume meanwhile.
            try executor.slices.drain(into: &slices, afterRunning: { () throws(ZMQError) in
                clock.resumeDue()
                try receiveAvailable(received)
            }, clearing: slicesItem.map(poller.isReadable) ?? false)
        } else {
            slices.removeAll(keepingCapacity: true)
            clock.resumeDue()
            try receiveAvailable(received)
        }
        if !slices.isEmpty {
            // What the slices post arrives without a wake-up of this loop either.
            events.drain(into: &jobEvents, afterRunning: { runEffectSlicesInRounds() }, clearing: poller.isReadable(eventsItem))
        } else if poller.isReadable(eventsItem) {
            events.drain(into: &jobEvents)
        } else {
            jobEvents.removeAll(keepingCapacity: true)
        }
        if !jobEvents.isEmpty {
            for event in jobEvents { try handle(event) }
            try closeReportBatch()
            try flushReports()
        }
        publishTally()
        return nil
    }

    /// Runs ``slices``, then, in up to ``sliceRounds`` rounds in all, the slices enqueued for this
    /// thread meanwhile: the code of one round resumes tasks on this executor (a reused task
    /// wakes the next for the runs that wait, a timer resumes a sleeping one), and each of those
    /// posts cost a `write` to wake this very loop, then a `read` and a poll that returns at once
    /// (about a twentieth of a worker's CPU in the async bench). Rounds before the last take what
    /// was posted without a wake-up; what the last one's code posts wakes the loop as before, so
    /// the socket is read again after at most ``sliceRounds`` rounds and nothing waits unseen.
    private func runEffectSlicesInRounds() {
        guard let executor else { return }
        for _ in 1..<Self.sliceRounds {
            executor.slices.drain(into: &nextSlices, afterRunning: { runEffectSlices(slices) })
            // Empty too when the watch moved effects to the pool: what was posted went there.
            guard !nextSlices.isEmpty else { return }
            swap(&slices, &nextSlices)
        }
        runEffectSlices(slices)
    }

    /// Runs effect slices taken from the executor on this thread; moves effects to the shared
    /// pool when the watch says so.
    private func runEffectSlices(_ slices: [UnownedJob]) {
        guard let executor else { return }
        sliceWatch.beforeBatch(now: MonotonicClock.nanoseconds(), cpuTime: LoopEffectExecutor.threadCPUTime)
        let (longest, total) = executor.run(slices)
        if let reason = sliceWatch.afterBatch(longest: longest, total: total, now: MonotonicClock.nanoseconds(),
                                              cpuTime: LoopEffectExecutor.threadCPUTime) {
            effectsOnLoop = false
            executor.moveToPool()
            metrics.update { $0.effectsOnLoopThread = false }
            logger.warning("\(reason): effects run on the shared thread pool from now on (--effect-threads pool starts them there)")
        }
    }

    /// Adds what was counted since the last call to the metrics, in one update.
    func publishTally() {
        guard !tally.isEmpty else { return }
        do {
            let (tally, running, queued) = (self.tally, running.count, queued.count)
            metrics.update { tally.add(to: &$0, running: running, queued: queued) }
        }
        // The copy above is gone: the durations' array is this tally's alone again, and keeps
        // its storage for the next turn's jobs.
        tally.reset()
    }

    /// The bytes of a message's frames.
    static func bytes(of frames: [[UInt8]]) -> UInt64 {
        UInt64(frames.reduce(0) { $0 + $1.count })
    }

    /// Stops taking jobs and waits (up to the grace period) for the running ones.
    private func beginDrain(now: UInt64) {
        drainDeadline = now &+ configuration.stopGracePeriod.wholeMilliseconds
        if !queued.isEmpty {
            let declined = queued.removeAll()
            metrics.update { $0.jobsDeclined += UInt64(declined) }
            publishCounts()
        }
        logger.info("stopping: waiting up to \(configuration.stopGracePeriod) for \(running.count) running job\(running.count == 1 ? "" : "s")")
    }

    /// Cancels what still runs, says `bye` and closes the socket with a bounded linger.
    private func finish(graceful: Bool) {
        abandonAll()
        do {
            try flushUnsent()
            try send(.bye)
            try socket.set(.linger, graceful ? Self.stopLinger : ZMQSocket.defaultLinger)
        } catch {
            logger.warning("could not say bye: \(error)")
        }
        socket.close()
        publishTally()
        metrics.update { $0.isRegistered = false }
        logger.info(graceful ? "stopped" : "stopped at once")
    }

    // MARK: - Socket

    /// A new DEALER with the worker's options, connected (connecting completes in the background).
    private static func makeSocket(context: ZMQContext, configuration: WorkerConfiguration, endpoint: String) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context: context, type: .dealer)
        do {
            try socket.set(.maxMessageSize, Int64(configuration.maxMessageBytes))
            try configuration.security?.apply(to: socket)
            try socket.connect(endpoint)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Registers `socket` and the events mailbox with `poller` (which has the wakeup), and
    /// starts the silence clock.
    private func attach(_ socket: ZMQSocket, to poller: NodePoller) throws(ZMQError) {
        eventsItem = poller.register(events)
        clockItem = poller.register(clock.wake)
        // Wakes the loop for a slice enqueued from another thread (a timer, another task).
        slicesItem = effectsOnLoop ? executor.map { poller.register($0.slices) } : nil
        socketItem = try poller.register(socket)
        self.poller = poller
        lastHeard = MonotonicClock.milliseconds()
    }

    /// The authority has been silent too long: drop everything and start a new session, on the
    /// next endpoint when there are several.
    private func reconnect(silentFor silence: UInt64) throws(ZMQError) {
        let cancelling = running.isEmpty ? "" : "; cancelling \(running.count) running job\(running.count == 1 ? "" : "s")"
        if endpoints.isList {
            try failOver(because: "after \(configuration.missedHeartbeats) missed heartbeats (\(silence) ms silent)\(cancelling)")
            return
        }
        metrics.update { $0.reconnects += 1 }
        logger.warning("no word from the authority for \(silence) ms; reconnecting\(running.isEmpty ? "" : " and cancelling \(running.count) running job\(running.count == 1 ? "" : "s")")")
        try replaceSocket()
    }

    /// Leaves the current endpoint for the next one and announces the worker there (`ready`).
    /// Running jobs are cancelled and their late results dropped: the authority that serves now
    /// re-dispatches what is unfinished.
    func failOver(because reason: String) throws(ZMQError) {
        let lost = endpoints.current
        let next = endpoints.advance()
        metrics.update {
            $0.reconnects += 1
            $0.failovers += 1
        }
        logger.info("authority \(lost) lost \(reason); trying \(next)")
        try replaceSocket()
    }

    /// Closes the socket at once (linger 0: a new session starts with `ready`), opens a new
    /// one and registers again. Running jobs are cancelled: the authority re-dispatches them.
    private func replaceSocket() throws(ZMQError) {
        abandonAll()
        unsent.removeAll()
        heartbeatMilliseconds = max(1, configuration.heartbeatInterval.wholeMilliseconds)
        metrics.update { $0.isRegistered = false }
        try? socket.set(.linger, 0)
        socket.close()
        socket = try Self.makeSocket(context: context, configuration: configuration, endpoint: endpoints.current)
        try attach(socket, to: poller.renewed())
        try sendReady()
    }

    /// Milliseconds from `start` to `now`; 0 if `start` is later (it was read after `now`).
    static func elapsed(since start: UInt64, now: UInt64) -> UInt64 {
        now > start ? now - start : 0
    }

    /// Announces the worker: name, app, capacity and kinds.
    func sendReady() throws(ZMQError) {
        // A new session: until its authority names what it reads, only what every release reads.
        authorityReadsDoneWithEmit = false
        authorityReadsReportBatches = false
        toldFeatures = false
        let capacity = UInt64(configuration.capacity)
        try send(.ready(name: configuration.name, app: configuration.appName, capacity: capacity, kinds: configuration.kinds,
                        schema: configuration.schemaVersion))
        readySentAt = MonotonicClock.milliseconds()
        metrics.update { $0.registrations += 1 }
        try sendSubscriber()
    }

    /// Sends a message without ever blocking the loop: behind a full pipe it waits its turn.
    /// The turn's pending reports go first, so everything leaves in the order it was made.
    func send(_ message: WorkerMessage) throws(ZMQError) {
        if !pendingReports.isEmpty { try flushReports() }
        try send(frames: message.frames(writer))
    }

    /// Sends a job's `emit`, `done` or `doneWithEmit`: held for the turn's `reports` message
    /// when the authority reads one and it fits (``JobReports/maxMessageBytes``), else at once.
    /// Any other message is sent at once, after what is held.
    func report(_ message: WorkerMessage) throws(ZMQError) {
        guard authorityReadsReportBatches, JobReports.isReport(message) else { return try send(message) }
        let bytes = JobReports.bytes(of: message)
        if JobReports.maxHeaderBytes + pendingReportBytes + bytes > JobReports.maxMessageBytes { try flushReports() }
        guard JobReports.maxHeaderBytes + bytes <= JobReports.maxMessageBytes else { return try send(message) }
        pendingReports.append(message)
        pendingReportBytes += bytes
    }

    /// Sends the held reports: one `reports` message, or the report itself when it is alone.
    func flushReports() throws(ZMQError) {
        guard !pendingReports.isEmpty else { return }
        let frames = pendingReports.count == 1 ? pendingReports[0].frames(writer) : WorkerMessage.reports(pendingReports).frames(writer)
        pendingReports.removeAll(keepingCapacity: true)
        pendingReportBytes = 0
        try send(frames: frames)
    }

    private func send(frames: [[UInt8]]) throws(ZMQError) {
        if unsent.isEmpty, try socket.trySend(frames) {
            lastSent = MonotonicClock.milliseconds()
            tally.bytesSent += Self.bytes(of: frames)
        } else {
            unsent.append(frames)
        }
    }

    /// Sends queued messages, oldest first, until the pipe is full again.
    private func flushUnsent() throws(ZMQError) {
        var sent = 0
        while sent < unsent.count, try socket.trySend(unsent[sent]) {
            tally.bytesSent += Self.bytes(of: unsent[sent])
            sent += 1
        }
        if sent > 0 {
            unsent.removeFirst(sent)
            lastSent = MonotonicClock.milliseconds()
        }
    }
}
