import ReactorLog
import ReactorWire
import ZeroMQ

/// Counters the client's loop publishes once per turn (see ``NodeMetrics``), for tests.
struct ClientDiagnostics: Sendable, Equatable {
    /// Actions sent and not answered yet.
    var inFlight = 0
    /// Actions waiting for a window slot.
    var queued = 0
    /// Action sends, first attempts and retries.
    var actionSends = 0
    /// Acks for actions that were already answered (for example the second ack of a resent action).
    var lateAnswers = 0
    /// Answers that did not decode.
    var badReplies = 0
    /// `busy` refusals received (each is waited out and resent, or fails the call at the give-up time).
    var busyRefusals = 0
    /// Completed handshakes with the authority: 1 after the first connection, +1 per reconnection.
    var connections = 0
    /// Actions resent because the connection came back or the authority's start id changed.
    var reconnectResends = 0
    /// Moves to the next of several actions endpoints after losing the current one.
    var failovers = 0
}

/// The request kinds of the actions socket besides actions.
enum ClientRequestKind: Sendable {
    case snapshot, ping, stats
    /// One chunk of the state's encoding (`nil` version: the current state, from offset 0).
    case snapshotChunk(version: UInt64?, offset: UInt64, maxBytes: UInt64)

    func message(_ id: UInt64) -> ClientMessage {
        switch self {
        case .snapshot: .snapshot(requestID: id)
        case .ping: .ping(requestID: id)
        case .stats: .stats(requestID: id)
        case .snapshotChunk(let version, let offset, let maxBytes): .snapshotChunk(requestID: id, version: version, offset: offset, maxBytes: maxBytes)
        }
    }

    var isPing: Bool {
        if case .ping = self { true } else { false }
    }

    func matches(_ reply: AuthorityReply) -> Bool {
        switch (self, reply) {
        case (.snapshot, .snapshot), (.ping, .pong), (.stats, .stats), (.snapshotChunk, .snapshotChunk): true
        default: false
        }
    }
}

/// The thread body of an ``ActionClient``: owns the DEALER, numbers actions, keeps the window,
/// resends on timeout, on `busy` (after a backoff pause) and on reconnection, and resolves
/// callers' continuations.
///
/// Everything here runs on the client's one loop thread. Callers reach it only through the
/// mailbox; answers leave through the continuations carried in the commands.
///
/// Connection state comes from the DEALER's socket monitor: nothing is sent while there is no
/// completed handshake (ZeroMQ would only queue it), attempts do not time out meanwhile, and
/// everything unanswered is resent with the same `client_seq` once a handshake completes. A
/// `pong` carries the authority's start id, so a restart is noticed even without a disconnect.
///
/// With several actions endpoints (``AuthorityEndpoints``) the loop talks to one at a time; it
/// counts it as lost when no handshake completed for ``ActionClientConfiguration/failoverAfter``
/// (never connected, or disconnected), after ``refusedDwellMilliseconds`` when a connection
/// attempt there failed outright (nothing listens: a dead or not yet promoted authority), or when its probe `ping` went unanswered for the attempt
/// timeout over a live connection. It then replaces its socket with one connected to the next
/// endpoint, and the handshake there resends everything unanswered with the same `client_seq`
/// (the authorities share the client ledger, so each action is applied once).
final class ClientLoop: NodeLoop {
    typealias ActionContinuation = UnsafeContinuation<Result<ActionAck, ClientError>, Never>
    typealias ReplyContinuation = UnsafeContinuation<Result<AuthorityReply, ClientError>, Never>

    /// What a caller posts to the loop.
    enum Command: Sendable {
        case action(payload: [UInt8], continuation: ActionContinuation)
        case request(ClientRequestKind, continuation: ReplyContinuation)
    }

    /// Request ids have the top bit set, so an `error` reply's `ref` names either a `client_seq`
    /// or a request id, never both.
    static let requestIDBase: UInt64 = 1 << 63
    /// Answers handled per turn at most, so timers stay responsive under a flood.
    static let receiveBatch = 4_096
    /// With actions unanswered and nothing heard for this long, the loop pings the authority to
    /// learn its start id (a restart behind a proxy shows no disconnect).
    static let probeMilliseconds: UInt64 = 500

    private struct PendingAction {
        var payload: [UInt8]
        var continuation: ActionContinuation
        /// Attempts made over a live connection (timeouts count, reconnection resends do not).
        var attempts: Int
        /// Bumped on every send; a deadline of an older generation is stale.
        var generation: UInt64
        /// When the first `busy` refusal of this action came, if one did.
        var firstBusyAt: UInt64?
        /// Refused `busy` and waiting in `busyQueue` for the pause to end.
        var backingOff: Bool
    }

    private struct PendingRequest {
        var kind: ClientRequestKind
        /// `nil` for the loop's own probe pings.
        var continuation: ReplyContinuation?
        var attempts: Int
        var generation: UInt64
    }

    /// When the attempt `generation` of `key` (a client_seq or request id) expires. Every attempt
    /// uses the same timeout, so deadlines are appended in order and a first-in, first-out queue
    /// is a priority queue; an entry whose attempt was answered or superseded is skipped.
    private struct Deadline {
        var at: UInt64
        var key: UInt64
        var generation: UInt64
    }

    private let configuration: ActionClientConfiguration
    private let logger: Logger
    private let context: ZMQContext
    private var socket: ZMQSocket
    private var monitor: ZMQSocket
    private let mailbox: Mailbox<Command>
    /// The commands of the last drain of ``mailbox``, kept from turn to turn (the mailbox and
    /// the loop swap arrays grown to the bursts, and a drain allocates nothing), and how many
    /// of them the loop took: those after, if taking one failed, are failed when it stops.
    private var commands: [Command] = []
    private var commandsTaken = 0
    private let runtime: NodeRuntime
    private let diagnostics: NodeMetrics<ClientDiagnostics>
    private var poller: NodePoller
    private let writer = HeaderWriter()
    private let timeoutMilliseconds: UInt64
    private let connectTimeoutMilliseconds: UInt64
    private let failoverMilliseconds: UInt64
    /// The actions endpoints; the socket is connected to the current one.
    private var endpoints: AuthorityEndpoints
    /// The terms authorities answered with (see ``AuthorityTermWatch``).
    private var terms = AuthorityTermWatch()
    /// Since when the current endpoint has had no completed handshake; `nil` while connected.
    private var unconnectedSince: UInt64?
    /// Whether a connection attempt to the current endpoint failed outright since the client
    /// arrived there (ZeroMQ's monitor reports it as retried).
    private var refused = false
    /// How long a client with several endpoints stays at one that refuses connections: long
    /// enough not to spin through sockets, short enough that a newly promoted authority is found
    /// within a few of these.
    static let refusedDwellMilliseconds: UInt64 = 25
    /// Whether the client moved to another endpoint since its last handshake.
    private var movedSinceConnected = false
    private var socketIndex = 0
    private var monitorIndex = 0
    private var mailboxIndex = 0

    private var nextClientSeq: UInt64 = 1
    private var nextRequestID: UInt64 = ClientLoop.requestIDBase + 1
    private var nextGeneration: UInt64 = 1
    private var waiting = Deque<(payload: [UInt8], continuation: ActionContinuation)>()
    private var actions: [UInt64: PendingAction] = [:]
    private var requests: [UInt64: PendingRequest] = [:]
    private var deadlines = Deque<Deadline>()

    /// A completed handshake and no disconnect since.
    private var connected = false
    /// Whether the authority said it serves ``ActionClientConfiguration/appName`` (always, when
    /// no app is configured): until then no new action is sent.
    private var appVerified: Bool
    /// Set when the client can never work (the authority serves another app): the loop ends.
    private var fatal: ClientError?
    /// Since when calls have waited without a connection; `nil` when connected or idle.
    private var stallSince: UInt64?
    /// The last time anything arrived from the authority.
    private var lastHeard: UInt64 = 0
    /// The authority's start id from the last `pong`; 0 before one (or from an older authority).
    private var authorityStartID: UInt64 = 0
    /// The request id of the probe ping in flight, if any.
    private var probe: UInt64?
    /// The request id of the ping sent on the last handshake.
    private var connectionProbe: UInt64?
    /// The request id of the `features` request sent on the last handshake, until answered.
    private var featuresRequest: UInt64?

    /// Actions refused `busy`, in `client_seq` order, resent when `pausedUntil` has passed.
    private var busyQueue = Deque<UInt64>()
    /// Nothing new is sent and `busyQueue` is not resent before this time.
    private var pausedUntil: UInt64 = 0
    /// Pauses in a row without an acceptance in between; sets the next pause's length.
    private var busyRound = 0
    private var random = SystemRandomNumberGenerator()

    private var actionSends = 0
    private var lateAnswers = 0
    private var badReplies = 0
    private var busyRefusals = 0
    private var connections = 0
    private var reconnectResends = 0
    private var failovers = 0

    /// Creates the DEALER, its monitor, and connects; throws what ZeroMQ reports.
    init(configuration: ActionClientConfiguration, logger: Logger, context: ZMQContext, mailbox: Mailbox<Command>,
         runtime: NodeRuntime, poller: NodePoller, diagnostics: NodeMetrics<ClientDiagnostics>) throws(ZMQError) {
        self.configuration = configuration
        appVerified = configuration.appName == nil && configuration.schema == nil
        self.logger = logger
        self.context = context
        self.mailbox = mailbox
        self.runtime = runtime
        self.poller = poller
        self.diagnostics = diagnostics
        self.timeoutMilliseconds = max(1, configuration.timeout.wholeMilliseconds)
        self.connectTimeoutMilliseconds = max(1, configuration.connectTimeout.wholeMilliseconds)
        self.failoverMilliseconds = max(1, configuration.failoverAfter.wholeMilliseconds)
        endpoints = AuthorityEndpoints(configuration.actionsEndpoint)
        (socket, monitor) = try Self.connect(to: endpoints.current, configuration: configuration, context: context)
        do {
            try register()
        } catch {
            socket.stopMonitor()
            monitor.close()
            socket.close()
            throw error
        }
        unconnectedSince = MonotonicClock.milliseconds()
        actions.reserveCapacity(configuration.window)
    }

    /// A DEALER with the client's options and its monitor, connected to `endpoint`.
    private static func connect(to endpoint: String, configuration: ActionClientConfiguration, context: ZMQContext) throws(ZMQError) -> (ZMQSocket, ZMQSocket) {
        let socket = try ZMQSocket(context: context, type: .dealer)
        let watcher: ZMQSocket
        do {
            try socket.set(.linger, 0)
            try socket.set(.maxMessageSize, Int64(configuration.maxMessageBytes) + 4_096)
            // The window bounds what is outstanding; the pipes must never be the tighter limit.
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try configuration.security?.apply(to: socket)
            // Watch the connection before connecting, so the first handshake is not missed.
            let events: ZMQMonitorEvents = [.handshakeSucceeded, .disconnected, .connectRetried, .handshakeFailures]
            watcher = try socket.monitor(events, name: "client-monitor-\(UInt64.random(in: 0 ... .max))")
        } catch {
            socket.close()
            throw error
        }
        do {
            try socket.connect(endpoint)
        } catch {
            socket.stopMonitor()
            watcher.close()
            socket.close()
            throw error
        }
        return (socket, watcher)
    }

    /// Registers the socket, its monitor and the mailbox with the poller.
    private func register() throws(ZMQError) {
        socketIndex = try poller.register(socket)
        monitorIndex = try poller.register(monitor)
        mailboxIndex = poller.register(mailbox)
    }

    /// Runs until the thread is asked to stop or ZeroMQ fails, then answers every call it holds.
    func run() {
        logger.debug("connected to \(endpoints.current) as \(configuration.clientID)")
        var failure = ClientError.closed
        while !runtime.isStopping && fatal == nil {
            do {
                try poller.wait(until: nextDeadline())
                if poller.isReadable(monitorIndex) { try readMonitor() }
                try receiveAnswers(poller.receive(socket, at: socketIndex, batch: Self.receiveBatch))
                if poller.isReadable(mailboxIndex) {
                    mailbox.drain(into: &commands)
                    commandsTaken = 0
                    for command in commands {
                        // A request that fails to go out is held, and failed with the others.
                        commandsTaken += 1
                        try accept(command)
                    }
                    commands.removeAll(keepingCapacity: true)
                }
                try resendBusy()
                try fillWindow()
                try expireDeadlines()
                try probeIfSilent()
                try failOverIfUnconnected()
                checkReachability()
            } catch where error.isTerminated {
                // The context was terminated (the owner is shutting down): a normal close.
                logger.debug("the ZeroMQ context was terminated: closing the client")
                break
            } catch {
                logger.error("actions socket failed, closing the client: \(error)")
                failure = .transport(error)
                break
            }
            publishDiagnostics()
        }
        // Monitoring stops before its reader closes (see ZMQSocket.stopMonitor()).
        socket.stopMonitor()
        monitor.close()
        socket.close()
        runtime.refuseCalls()
        failEverything(with: fatal ?? failure)
        publishDiagnostics()
    }

    /// When the loop must next look at its timers (the poller waits at most 1 s anyway).
    private func nextDeadline() -> UInt64 {
        let now = MonotonicClock.milliseconds()
        var next = now + 1_000
        if let deadline = deadlines.first { next = min(next, deadline.at) }
        if !busyQueue.isEmpty { next = min(next, pausedUntil) }
        if let stallSince { next = min(next, stallDeadline(since: stallSince)) }
        if connected, probe == nil, !actions.isEmpty { next = min(next, lastHeard + Self.probeMilliseconds) }
        if endpoints.isList, let unconnectedSince { next = min(next, unconnectedSince + failoverAfterMilliseconds) }
        return next
    }

    private func newGeneration() -> UInt64 {
        defer { nextGeneration += 1 }
        return nextGeneration
    }

    // MARK: Calls

    private func accept(_ command: Command) throws(ZMQError) {
        switch command {
        case .action(let payload, let continuation):
            waiting.append((payload, continuation))
        case .request(let kind, let continuation):
            let id = nextRequestID
            nextRequestID += 1
            requests[id] = PendingRequest(kind: kind, continuation: continuation, attempts: 1, generation: 0)
            try transmitRequest(id)
        }
    }

    /// Sends waiting actions while the window has room, the connection is up and no `busy`
    /// pause is on.
    private func fillWindow() throws(ZMQError) {
        guard connected, busyQueue.isEmpty, appVerified else { return }
        while actions.count < configuration.window, let next = waiting.popFirst() {
            let seq = nextClientSeq
            nextClientSeq += 1
            actions[seq] = PendingAction(payload: next.payload, continuation: next.continuation, attempts: 1, generation: 0, firstBusyAt: nil, backingOff: false)
            try transmitAction(seq)
        }
    }

    /// Sends the current attempt of action `seq` and arms its deadline; without a connection it
    /// only forgets older deadlines, and the handshake sends it.
    private func transmitAction(_ seq: UInt64) throws(ZMQError) {
        guard var pending = actions[seq] else { return }
        pending.generation = newGeneration()
        actions[seq] = pending
        guard connected else { return }
        let clientID = configuration.clientID
        let header = writer.header("action", { $0.packString(clientID); $0.packUInt(seq) }, count: 2)
        // A message that cannot be queued now counts as a lost attempt: its deadline resends it.
        if try socket.trySend(header, more: true) {
            if try !socket.trySend(pending.payload) { throw ZMQError(code: ZMQError.Code.wouldBlock, function: "zmq_send") }
        } else {
            logger.debug("client_seq \(seq) could not be queued; it is resent when its attempt times out")
        }
        actionSends += 1
        deadlines.append(Deadline(at: MonotonicClock.milliseconds() + timeoutMilliseconds, key: seq, generation: pending.generation))
    }

    private func transmitRequest(_ id: UInt64) throws(ZMQError) {
        guard var pending = requests[id] else { return }
        pending.generation = newGeneration()
        requests[id] = pending
        // Until a pong showed the authority's app and schema, only pings go out: a snapshot of
        // another app or schema must not reach the caller. The pong sends the others.
        guard connected, appVerified || pending.kind.isPing else { return }
        if try !socket.trySend(pending.kind.message(id).frames(writer)) {
            logger.debug("request \(id) could not be queued; it is resent when its attempt times out")
        }
        deadlines.append(Deadline(at: MonotonicClock.milliseconds() + timeoutMilliseconds, key: id, generation: pending.generation))
    }

    // MARK: Connection

    private func readMonitor() throws(ZMQError) {
        while let event = try monitor.readMonitorEvent() {
            if event.event == .handshakeSucceeded {
                try connectionUp()
            } else if event.event == .disconnected {
                connectionDown()
            } else if event.event == .connectRetried {
                if !connected { refused = true }
            } else if !event.event.isDisjoint(with: .handshakeFailures) {
                logger.warning("the handshake with \(endpoints.current) failed (error \(event.value)): check the CURVE keys of client and authority")
            }
        }
    }

    /// A handshake completed: resend everything unanswered, then ping to learn the start id.
    private func connectionUp() throws(ZMQError) {
        guard !connected else { return }
        connected = true
        connections += 1
        lastHeard = MonotonicClock.milliseconds()
        stallSince = nil
        unconnectedSince = nil
        refused = false
        try announceFeatures()
        let resent = try resendUnanswered()
        if movedSinceConnected {
            logger.info("connected to \(endpoints.current); resent \(resent) unacknowledged action(s) with their client_seq")
        } else if connections > 1 {
            logger.info("reconnected to \(endpoints.current); resent \(resent) unacknowledged action(s) with their client_seq")
        }
        movedSinceConnected = false
        try sendProbe()
        connectionProbe = probe
    }

    /// Names the replies this client reads beyond every release's (``ClientFeature``), on each
    /// connection: the authority keeps them per routing id, and a new connection has a new one.
    /// Unanswered, it costs nothing: the authority then sends what every release sends.
    private func announceFeatures() throws(ZMQError) {
        let id = nextRequestID
        nextRequestID += 1
        featuresRequest = id
        if try !socket.trySend(ClientMessage.features(requestID: id, features: ClientFeature.all).frames(writer)) {
            logger.debug("the features request could not be queued; acks come one by one on this connection")
        }
    }

    private func connectionDown() {
        guard connected else { return }
        connected = false
        unconnectedSince = MonotonicClock.milliseconds()
        if let probe { requests[probe] = nil }
        probe = nil
        logger.warning("lost the connection to \(endpoints.current); unacknowledged actions are resent \(endpoints.isList ? "on the first of the actions endpoints that answers" : "when it is back")")
    }

    // MARK: Failover

    /// With several endpoints: moves on when the current one has had no handshake for the
    /// failover time.
    private func failOverIfUnconnected() throws(ZMQError) {
        guard endpoints.isList, !connected, let since = unconnectedSince,
              MonotonicClock.milliseconds() >= since + failoverAfterMilliseconds else { return }
        try failOver(because: refused ? "it refused the connection" : "no connection for \(configuration.failoverAfter)")
    }

    /// How long the client waits at the current endpoint for a connection before trying the next.
    private var failoverAfterMilliseconds: UInt64 {
        refused ? min(failoverMilliseconds, Self.refusedDwellMilliseconds) : failoverMilliseconds
    }

    /// Leaves the current endpoint for the next: a new socket (what the old one still held is
    /// dropped with it), a fresh app check, and the handshake there resends everything unanswered.
    private func failOver(because reason: String) throws(ZMQError) {
        let lost = endpoints.current
        let next = endpoints.advance()
        failovers += 1
        // While none is serving (a takeover under way) the client moves every few tens of ms:
        // only the first move after a connection says so above debug.
        if movedSinceConnected {
            logger.debug("authority \(lost) lost (\(reason)); trying \(next)")
        } else {
            logger.info("authority \(lost) lost (\(reason)); trying \(next)")
        }
        movedSinceConnected = true
        refused = false
        connected = false
        if let probe { requests[probe] = nil }
        probe = nil
        connectionProbe = nil
        // Another authority: its start id is its own, and its app is checked again before
        // anything new is sent (what was sent before is resent: the ledger answers it).
        authorityStartID = 0
        appVerified = configuration.appName == nil && configuration.schema == nil
        socket.stopMonitor()
        monitor.close()
        socket.close()
        (socket, monitor) = try Self.connect(to: next, configuration: configuration, context: context)
        poller = poller.renewed()
        try register()
        unconnectedSince = MonotonicClock.milliseconds()
    }

    /// Resends every unanswered action not waiting out `busy`, and every request; returns the
    /// number of actions resent. Attempt counts stay: the resend is owed to the connection.
    @discardableResult
    private func resendUnanswered() throws(ZMQError) -> Int {
        let seqs = actions.filter { !$0.value.backingOff }.keys.sorted()
        for seq in seqs { try transmitAction(seq) }
        for id in requests.keys.sorted() where id != probe { try transmitRequest(id) }
        reconnectResends += seqs.count
        return seqs.count
    }

    private func sendProbe() throws(ZMQError) {
        guard connected, probe == nil else { return }
        let id = nextRequestID
        nextRequestID += 1
        probe = id
        requests[id] = PendingRequest(kind: .ping, continuation: nil, attempts: 1, generation: 0)
        try transmitRequest(id)
    }

    /// Pings when actions wait and the authority has been silent for a while.
    private func probeIfSilent() throws(ZMQError) {
        guard connected, probe == nil, !actions.isEmpty, MonotonicClock.milliseconds() >= lastHeard + Self.probeMilliseconds else { return }
        try sendProbe()
    }

    /// When calls stalled since `since` fail: one millisecond past the connect timeout, as both
    /// readings of the clock are whole milliseconds (rounded down) and the calls must never fail
    /// before the authority has been unreachable for the whole timeout.
    private func stallDeadline(since: UInt64) -> UInt64 {
        since + connectTimeoutMilliseconds + 1
    }

    /// Fails every waiting call once the authority has been unreachable for the connect timeout.
    private func checkReachability() {
        let needed = !actions.isEmpty || !waiting.isEmpty || requests.keys.contains { $0 != probe }
        guard !connected, needed else {
            stallSince = nil
            return
        }
        let now = MonotonicClock.milliseconds()
        guard let since = stallSince else {
            stallSince = now
            return
        }
        guard now >= stallDeadline(since: since) else { return }
        logger.error("no connection to \(configuration.actionsEndpoint) for \(configuration.connectTimeout); failing \(actions.count + waiting.count) action(s) and \(requests.count) request(s)")
        stallSince = nil
        let error = ClientError.unreachable(endpoint: configuration.actionsEndpoint, waited: configuration.connectTimeout)
        for (_, pending) in actions { pending.continuation.resume(returning: .failure(error)) }
        actions.removeAll()
        _ = busyQueue.removeAll()
        for (_, pending) in requests { pending.continuation?.resume(returning: .failure(error)) }
        requests.removeAll()
        probe = nil
        for item in waiting.removeAll() { item.continuation.resume(returning: .failure(error)) }
    }

    // MARK: Answers

    private func receiveAnswers(_ batch: ReceiveBatch) throws(ZMQError) {
        var batch = batch
        while let frames = try batch.next() {
            lastHeard = MonotonicClock.milliseconds()
            let reply: AuthorityReply
            do {
                reply = try AuthorityReply(frames: frames)
            } catch {
                badReplies += 1
                logger.warning("dropped an answer that does not follow the protocol: \(error)")
                continue
            }
            try handle(reply)
            // A failover replaced the socket: what the old one held is not read.
            if batch.socket !== socket { return }
        }
    }

    private func handle(_ reply: AuthorityReply) throws(ZMQError) {
        switch reply {
        case .ack(let clientSeq, let actionSeq, let version):
            settle(ActionAck(clientSeq: clientSeq, actionSeq: actionSeq, version: version))
        case .acks(let entries):
            for entry in entries { settle(ActionAck(clientSeq: entry.clientSeq, actionSeq: entry.actionSeq, version: entry.version)) }
        case .features(let id, let features):
            guard id == featuresRequest else {
                lateAnswers += 1
                return
            }
            featuresRequest = nil
            logger.debug("the authority at \(endpoints.current) offers \(features.isEmpty ? "no features" : features.joined(separator: ", "))")
        case .error(let ref, let code, let message) where ref == featuresRequest:
            // An authority of an earlier release (`unknown_kind`): it sends every ack on its own,
            // as before; so does one that refuses the request for another reason.
            featuresRequest = nil
            if code == .unknownKind {
                logger.debug("the authority at \(endpoints.current) predates the features request; acks come one by one")
            } else {
                logger.info("the authority at \(endpoints.current) refused the features request (\(code.rawValue): \(message)); acks come one by one")
            }
        case .snapshot(let id, _, _, _, _), .pong(let id, _, _, _, _, _, _), .stats(let id, _), .snapshotChunk(let id, _, _, _, _, _, _):
            if case .pong(_, _, let startID, let app, let schema, let compatible, _) = reply {
                if case .older(let term, let highest) = terms.check(AuthorityTermWatch.term(of: reply)) {
                    logger.warning("the authority at \(endpoints.current) answers from term \(term), older than term \(highest) seen before")
                    if endpoints.isList {
                        try failOver(because: "term \(term) is older than \(highest)")
                        return
                    }
                }
                let wasVerified = appVerified
                guard checkApp(app, schema: schema, compatible: compatible) else { return }
                try noteStart(startID, resend: id != connectionProbe)
                if !wasVerified {
                    for held in requests.keys.sorted() where requests[held]?.kind.isPing == false { try transmitRequest(held) }
                }
            }
            guard let pending = requests.removeValue(forKey: id) else {
                lateAnswers += 1
                return
            }
            if id == probe {
                probe = nil
                return
            }
            if pending.kind.matches(reply) {
                pending.continuation?.resume(returning: .success(reply))
            } else {
                pending.continuation?.resume(returning: .failure(.badReply(ProtocolError(.unknownKind, "request \(id) was answered with the wrong kind of reply"))))
            }
        case .error(let ref, .busy, let message) where actions[ref] != nil:
            // A second copy's refusal (after a reconnection both copies may arrive) changes nothing.
            if actions[ref]?.backingOff == true {
                lateAnswers += 1
            } else {
                busy(ref, message: message)
            }
        case .error(let ref, .unavailable, let message) where endpoints.isList && actions[ref] != nil:
            // The authority could not journal the action and stops: whether it survives is
            // unknown, so it is kept and resent, under its client_seq, to the next authority.
            try failOver(because: "it refused client_seq \(ref) as unavailable: \(message)")
        case .error(let ref, let code, let message):
            let refusal = ClientError.refused(code: code, message: message)
            if let pending = actions.removeValue(forKey: ref) {
                pending.continuation.resume(returning: .failure(refusal))
            } else if let pending = requests.removeValue(forKey: ref) {
                if ref == probe { probe = nil }
                pending.continuation?.resume(returning: .failure(refusal))
            } else {
                lateAnswers += 1
                logger.warning("the authority reported \(code.rawValue) for \(ref == 0 ? "an unknown message" : "\(ref)"), which no call waits for: \(message)")
            }
        }
    }

    /// An ack settles its action even while it waits out `busy` (an earlier attempt got
    /// through); its place in `busyQueue` is skipped when the pause ends.
    private func settle(_ ack: ActionAck) {
        guard let pending = actions.removeValue(forKey: ack.clientSeq) else {
            lateAnswers += 1
            return
        }
        busyRound = 0
        pending.continuation.resume(returning: .success(ack))
    }

    /// Whether the authority's app and schema version (from a `pong`) are the ones configured; a
    /// different one ends the client with `wrong_app` before any action of it is sent (an
    /// authority that predates the app field says nothing and is trusted).
    private func checkApp(_ app: String, schema: UInt32, compatible: [UInt32]) -> Bool {
        if let own = configuration.schema, !own.agrees(withAuthority: schema, accepting: compatible) {
            return refuse(own.disagreement(app: app, endpoint: endpoints.current, authority: schema))
        }
        guard let expected = configuration.appName, !app.isEmpty else {
            appVerified = true
            return true
        }
        guard app == expected else {
            return refuse("the authority at \(endpoints.current) serves app '\(app)', not '\(expected)'")
        }
        appVerified = true
        return true
    }

    /// Ends the client with `wrong_app`: every call fails with `message`.
    private func refuse(_ message: String) -> Bool {
        logger.error("\(message); the client stops")
        runtime.failure.record(ProtocolError(.wrongApp, message))
        fatal = .refused(code: .wrongApp, message: message)
        return false
    }

    /// A new start id means the authority restarted, and whatever it had not answered is lost;
    /// `resend` is false for the ping sent on connecting, as the handshake already resent it all.
    private func noteStart(_ startID: UInt64, resend: Bool) throws(ZMQError) {
        guard startID != 0 else { return }
        defer { authorityStartID = startID }
        guard authorityStartID != 0, startID != authorityStartID else { return }
        guard resend else {
            logger.info("the authority at \(endpoints.current) restarted (new start id)")
            return
        }
        let resent = try resendUnanswered()
        logger.info("the authority at \(endpoints.current) restarted; resent \(resent) unacknowledged action(s) with their client_seq")
    }

    /// Keeps a `busy` action for a resend after the pause, or fails it past the give-up time.
    private func busy(_ seq: UInt64, message: String) {
        guard var pending = actions[seq] else { return }
        busyRefusals += 1
        let now = MonotonicClock.milliseconds()
        let firstBusyAt = pending.firstBusyAt ?? now
        guard now - firstBusyAt < configuration.busyBackoff.giveUpAfter.wholeMilliseconds else {
            actions[seq] = nil
            pending.continuation.resume(returning: .failure(.refused(code: .busy, message: message)))
            return
        }
        pending.firstBusyAt = firstBusyAt
        pending.backingOff = true
        pending.generation = newGeneration()  // its attempt deadline no longer applies
        actions[seq] = pending
        busyQueue.append(seq)
        // One pause per round: the first refusal after a pause ended starts the next one.
        if now >= pausedUntil {
            let pause = configuration.busyBackoff.pauseMilliseconds(round: busyRound, unit: Double.random(in: 0...1, using: &random))
            pausedUntil = now + pause
            busyRound += 1
            logger.debug("the authority is busy; pausing \(pause) ms (round \(busyRound)) before resending \(busyQueue.count) action(s)")
        }
    }

    /// Resends the actions refused `busy`, oldest first, once the pause is over.
    private func resendBusy() throws(ZMQError) {
        guard connected, !busyQueue.isEmpty, MonotonicClock.milliseconds() >= pausedUntil else { return }
        for seq in busyQueue.removeAll() {
            guard var pending = actions[seq], pending.backingOff else { continue }
            pending.backingOff = false
            actions[seq] = pending
            try transmitAction(seq)
        }
    }

    // MARK: Timeouts

    private func expireDeadlines() throws(ZMQError) {
        let now = MonotonicClock.milliseconds()
        let attempts = configuration.retries + 1
        while let next = deadlines.first, next.at <= now {
            _ = deadlines.popFirst()
            if next.key >= Self.requestIDBase {
                guard var pending = requests[next.key], pending.generation == next.generation else { continue }
                if next.key == probe {
                    requests[next.key] = nil
                    probe = nil
                    if endpoints.isList, connected {
                        try failOver(because: "no pong within \(configuration.timeout)")
                        return
                    }
                } else if !connected {
                    continue  // resent when the connection is back
                } else if pending.attempts < attempts {
                    pending.attempts += 1
                    requests[next.key] = pending
                    logger.debug("request \(next.key) unanswered, attempt \(pending.attempts) of \(attempts)")
                    try transmitRequest(next.key)
                } else {
                    requests[next.key] = nil
                    pending.continuation?.resume(returning: .failure(.timedOut(attempts: pending.attempts)))
                }
            } else {
                guard var pending = actions[next.key], pending.generation == next.generation, connected else { continue }
                if pending.attempts < attempts {
                    pending.attempts += 1
                    actions[next.key] = pending
                    logger.debug("client_seq \(next.key) unanswered, attempt \(pending.attempts) of \(attempts)")
                    try transmitAction(next.key)
                } else {
                    actions[next.key] = nil
                    pending.continuation.resume(returning: .failure(.timedOut(attempts: pending.attempts)))
                }
            }
        }
    }

    // MARK: Shutdown

    private func failEverything(with error: ClientError) {
        for (_, pending) in actions { pending.continuation.resume(returning: .failure(error)) }
        actions.removeAll()
        _ = busyQueue.removeAll()
        for (_, pending) in requests { pending.continuation?.resume(returning: .failure(error)) }
        requests.removeAll()
        for item in waiting.removeAll() { item.continuation.resume(returning: .failure(error)) }
        // Calls are refused now (refuseCalls), so nothing more can be posted: this drain is the
        // last. Before it, the commands a failed turn drained and did not take.
        let untaken = commands.dropFirst(commandsTaken)
        commands.removeAll()
        for command in untaken + mailbox.drain() {
            switch command {
            case .action(_, let continuation): continuation.resume(returning: .failure(error))
            case .request(_, let continuation): continuation.resume(returning: .failure(error))
            }
        }
    }

    private func publishDiagnostics() {
        diagnostics.publish(ClientDiagnostics(
            inFlight: actions.count, queued: waiting.count, actionSends: actionSends, lateAnswers: lateAnswers,
            badReplies: badReplies, busyRefusals: busyRefusals, connections: connections, reconnectResends: reconnectResends,
            failovers: failovers))
    }
}
