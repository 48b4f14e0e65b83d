import ReactorLog
import Synchronization

/// Whether an ``ActionClient`` accepts calls; shared by the handle and its loop.
///
/// Calls are posted to the loop's mailbox under this lock, and the loop marks itself closed under
/// it before its final drain, so every call that was accepted is answered, even one racing `close()`.
final class ClientGate: Sendable {
    enum Phase { case idle, running, closed }

    private let phase = Mutex(Phase.idle)

    /// Runs `post` if the loop runs; otherwise returns `.closed` without running it.
    func submit(_ post: () -> Void) -> ClientError? {
        phase.withLock { phase in
            guard phase == .running else { return .closed }
            post()
            return nil
        }
    }

    /// Moves from idle to running; false if it was not idle.
    func open() -> Bool {
        phase.withLock { phase in
            guard phase == .idle else { return false }
            phase = .running
            return true
        }
    }

    /// Refuses every later call; returns the phase it had.
    @discardableResult
    func close() -> Phase {
        phase.withLock { phase in
            defer { phase = .closed }
            return phase
        }
    }
}

/// Counters the loop publishes once per turn, readable from any thread (for tests and metrics).
final class ClientDiagnostics: Sendable {
    /// Actions sent and not answered yet.
    let inFlight = Atomic<Int>(0)
    /// Actions waiting for a window slot.
    let queued = Atomic<Int>(0)
    /// Action sends, first attempts and retries.
    let actionSends = Atomic<Int>(0)
    /// Acks for actions that were already answered (for example the second ack of a resent action).
    let lateAnswers = Atomic<Int>(0)
    /// Answers that did not decode.
    let badReplies = Atomic<Int>(0)
}

/// The request kinds of the actions socket besides actions.
enum ClientRequestKind: Sendable {
    case snapshot, ping, stats

    func message(_ id: UInt64) -> ClientMessage {
        switch self {
        case .snapshot: .snapshot(requestID: id)
        case .ping: .ping(requestID: id)
        case .stats: .stats(requestID: id)
        }
    }

    func matches(_ reply: AuthorityReply) -> Bool {
        switch (self, reply) {
        case (.snapshot, .snapshot), (.ping, .pong), (.stats, .stats): true
        default: false
        }
    }
}

/// The thread body of an ``ActionClient``: owns the DEALER, numbers actions, keeps the window,
/// resends on timeout and resolves callers' continuations.
///
/// Everything here runs on the client's one loop thread. Callers reach it only through the
/// mailbox; answers leave through the continuations carried in the commands.
final class ClientLoop {
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

    private struct PendingAction {
        var payload: [UInt8]
        var continuation: ActionContinuation
        var attempts: Int
    }

    private struct PendingRequest {
        var kind: ClientRequestKind
        var continuation: ReplyContinuation
        var attempts: Int
    }

    /// When the latest attempt of `key` (a client_seq or request id) expires. Every attempt uses
    /// the same timeout, so deadlines are appended in order and a first-in, first-out queue is a priority queue; an
    /// entry whose attempt was answered or superseded is skipped when it comes up.
    private struct Deadline {
        var at: UInt64
        var key: UInt64
        var attempt: Int
    }

    private let configuration: ActionClientConfiguration
    private let logger: Logger
    private let socket: ZMQSocket
    private let mailbox: Mailbox<Command>
    private let thread: NodeThread
    private let gate: ClientGate
    private let diagnostics: ClientDiagnostics
    private let poller = ZMQPoller()
    private let writer = HeaderWriter()
    private let timeoutMilliseconds: UInt64
    private var socketIndex = 0
    private var mailboxIndex = 0

    private var nextClientSeq: UInt64 = 1
    private var nextRequestID: UInt64 = ClientLoop.requestIDBase + 1
    private var waiting = Deque<(payload: [UInt8], continuation: ActionContinuation)>()
    private var actions: [UInt64: PendingAction] = [:]
    private var requests: [UInt64: PendingRequest] = [:]
    private var deadlines = Deque<Deadline>()
    private var actionSends = 0
    private var lateAnswers = 0
    private var badReplies = 0

    /// Creates the DEALER and connects it; throws what ZeroMQ reports.
    init(configuration: ActionClientConfiguration, logger: Logger, context: ZMQContext, mailbox: Mailbox<Command>,
         thread: NodeThread, gate: ClientGate, diagnostics: ClientDiagnostics) throws(ZMQError) {
        self.configuration = configuration
        self.logger = logger
        self.mailbox = mailbox
        self.thread = thread
        self.gate = gate
        self.diagnostics = diagnostics
        self.timeoutMilliseconds = max(1, configuration.timeout.wholeMilliseconds)
        socket = try ZMQSocket(context: context, type: .dealer)
        do {
            try socket.set(.linger, 0)
            try socket.set(.maxMessageSize, Int64(configuration.maxMessageBytes) + 4_096)
            // The window bounds what is outstanding; the pipes must never be the tighter limit.
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try configuration.security?.apply(to: socket)
            try socket.connect(configuration.actionsEndpoint)
            socketIndex = try poller.register(socket)
        } catch {
            socket.close()
            throw error
        }
        mailboxIndex = poller.register(mailbox)
        poller.register(thread.wakeup)
        actions.reserveCapacity(configuration.window)
    }

    /// Runs until the thread is asked to stop or ZeroMQ fails, then answers every call it holds.
    func run() {
        var failure = ClientError.closed
        while !thread.isStopping {
            do {
                try poller.poll(timeout: pollTimeout())
                if poller.isReadable(socketIndex) { try receiveAnswers() }
                if poller.isReadable(mailboxIndex) {
                    for command in mailbox.drain() { try accept(command) }
                }
                try fillWindow()
                try expireDeadlines()
            } catch {
                logger.error("actions socket failed, closing the client: \(error)")
                failure = .transport(error)
                break
            }
            publishDiagnostics()
        }
        socket.close()
        gate.close()
        failEverything(with: failure)
        publishDiagnostics()
    }

    private func pollTimeout() -> Int {
        guard let next = deadlines.first else { return 1_000 }
        let now = MonotonicClock.milliseconds()
        return next.at <= now ? 0 : Int(min(next.at - now, 1_000))
    }

    // MARK: Calls

    private func accept(_ command: Command) throws(ZMQError) {
        switch command {
        case .action(let payload, let continuation):
            waiting.append((payload, continuation))
        case .request(let kind, let continuation):
            let id = nextRequestID
            nextRequestID += 1
            requests[id] = PendingRequest(kind: kind, continuation: continuation, attempts: 1)
            try sendRequest(kind, id: id, attempt: 1)
        }
    }

    /// Sends waiting actions while the window has room.
    private func fillWindow() throws(ZMQError) {
        while actions.count < configuration.window, let next = waiting.popFirst() {
            let seq = nextClientSeq
            nextClientSeq += 1
            actions[seq] = PendingAction(payload: next.payload, continuation: next.continuation, attempts: 1)
            try sendAction(seq, payload: next.payload, attempt: 1)
        }
    }

    private func sendAction(_ seq: UInt64, payload: [UInt8], attempt: Int) throws(ZMQError) {
        let clientID = configuration.clientID
        let header = writer.header("action", { $0.packString(clientID); $0.packUInt(seq) }, count: 2)
        // A message that cannot be queued now counts as a lost attempt: its deadline resends it.
        if try socket.trySend(header, more: true) {
            if try !socket.trySend(payload) { throw ZMQError(code: ZMQError.Code.wouldBlock, function: "zmq_send") }
        } else {
            logger.debug("client_seq \(seq) could not be queued; it is resent when its attempt times out")
        }
        actionSends += 1
        deadlines.append(Deadline(at: MonotonicClock.milliseconds() + timeoutMilliseconds, key: seq, attempt: attempt))
    }

    private func sendRequest(_ kind: ClientRequestKind, id: UInt64, attempt: Int) throws(ZMQError) {
        if try !socket.trySend(kind.message(id).frames(writer)) {
            logger.debug("request \(id) could not be queued; it is resent when its attempt times out")
        }
        deadlines.append(Deadline(at: MonotonicClock.milliseconds() + timeoutMilliseconds, key: id, attempt: attempt))
    }

    // MARK: Answers

    private func receiveAnswers() throws(ZMQError) {
        for _ in 0..<Self.receiveBatch {
            guard let frames = try socket.tryReceiveMultipart() else { return }
            let reply: AuthorityReply
            do {
                reply = try AuthorityReply(frames: frames)
            } catch {
                badReplies += 1
                logger.warning("dropped an answer that does not follow the protocol: \(error)")
                continue
            }
            handle(reply)
        }
    }

    private func handle(_ reply: AuthorityReply) {
        switch reply {
        case .ack(let clientSeq, let actionSeq, let version):
            guard let pending = actions.removeValue(forKey: clientSeq) else {
                lateAnswers += 1
                return
            }
            pending.continuation.resume(returning: .success(ActionAck(clientSeq: clientSeq, actionSeq: actionSeq, version: version)))
        case .snapshot(let id, _, _, _, _), .pong(let id, _), .stats(let id, _):
            guard let pending = requests.removeValue(forKey: id) else {
                lateAnswers += 1
                return
            }
            if pending.kind.matches(reply) {
                pending.continuation.resume(returning: .success(reply))
            } else {
                pending.continuation.resume(returning: .failure(.badReply(ProtocolError(.unknownKind, "request \(id) was answered with the wrong kind of reply"))))
            }
        case .error(let ref, let code, let message):
            let refusal = ClientError.refused(code: code, message: message)
            if let pending = actions.removeValue(forKey: ref) {
                pending.continuation.resume(returning: .failure(refusal))
            } else if let pending = requests.removeValue(forKey: ref) {
                pending.continuation.resume(returning: .failure(refusal))
            } else {
                lateAnswers += 1
                logger.warning("the authority reported \(code.rawValue) for \(ref == 0 ? "an unknown message" : "\(ref)"), which no call waits for: \(message)")
            }
        }
    }

    // MARK: Timeouts

    private func expireDeadlines() throws(ZMQError) {
        let now = MonotonicClock.milliseconds()
        let attempts = configuration.retries + 1
        while let next = deadlines.first, next.at <= now {
            _ = deadlines.popFirst()
            if next.key >= Self.requestIDBase {
                guard var pending = requests[next.key], pending.attempts == next.attempt else { continue }
                if pending.attempts < attempts {
                    pending.attempts += 1
                    requests[next.key] = pending
                    logger.debug("request \(next.key) unanswered, attempt \(pending.attempts) of \(attempts)")
                    try sendRequest(pending.kind, id: next.key, attempt: pending.attempts)
                } else {
                    requests[next.key] = nil
                    pending.continuation.resume(returning: .failure(.timedOut(attempts: pending.attempts)))
                }
            } else {
                guard var pending = actions[next.key], pending.attempts == next.attempt else { continue }
                if pending.attempts < attempts {
                    pending.attempts += 1
                    actions[next.key] = pending
                    logger.debug("client_seq \(next.key) unanswered, attempt \(pending.attempts) of \(attempts)")
                    try sendAction(next.key, payload: pending.payload, attempt: pending.attempts)
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
        for (_, pending) in requests { pending.continuation.resume(returning: .failure(error)) }
        requests.removeAll()
        for item in waiting.removeAll() { item.continuation.resume(returning: .failure(error)) }
        // The gate is closed, so nothing more can be posted: this drain is the last.
        for command in mailbox.drain() {
            switch command {
            case .action(_, let continuation): continuation.resume(returning: .failure(error))
            case .request(_, let continuation): continuation.resume(returning: .failure(error))
            }
        }
    }

    private func publishDiagnostics() {
        diagnostics.inFlight.store(actions.count, ordering: .relaxed)
        diagnostics.queued.store(waiting.count, ordering: .relaxed)
        diagnostics.actionSends.store(actionSends, ordering: .relaxed)
        diagnostics.lateAnswers.store(lateAnswers, ordering: .relaxed)
        diagnostics.badReplies.store(badReplies, ordering: .relaxed)
    }
}
