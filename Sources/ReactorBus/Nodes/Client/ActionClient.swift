import MessagePack
import ReactorCore
import ReactorLog
import ReactorWire
import ZeroMQ

/// Sends actions to the authority and reads its snapshot, version and counters.
///
/// A handle over one loop thread that owns a DEALER connected to the authority's actions socket.
/// Every method is safe from any thread or task.
///
/// - Each action gets the next `client_seq` (1, 2, 3, ...) in the order the loop receives the
///   calls; acks come back in the order the authority accepted the actions.
/// - At most ``ActionClientConfiguration/window`` actions are on the wire unanswered; further
///   `send` calls stay suspended until a slot frees. Pipelining is the fast path: issue many
///   sends concurrently (for example from a task group), they share one socket and one thread.
/// - On every connection it asks the authority for batched acks (docs/PROTOCOL.md, "Batched
///   acks"): the acks of the actions one authority turn accepted then arrive as one message,
///   each settling its own call; an authority that does not offer them sends an ack per action.
/// - An attempt unanswered after ``ActionClientConfiguration/timeout`` over a live connection is
///   resent with the same `(client_id, client_seq)`; the authority applies it once and acks the
///   original. After `retries` resends the call fails with ``ClientError/timedOut(attempts:)``.
/// - Overload: an action refused `busy` is kept and resent with the same `client_seq` after a
///   jittered, growing pause (``ActionClientConfiguration/busyBackoff``), and nothing new is sent
///   meanwhile; it fails with `busy` only after ``BusyBackoff/giveUpAfter``.
/// - Outage: nothing is sent and no attempt times out while the connection is down; what is
///   unanswered is resent as soon as a handshake completes again, or when a `pong` reports a new
///   authority start id. Calls that wait ``ActionClientConfiguration/connectTimeout`` without a
///   connection fail with ``ClientError/unreachable(endpoint:waited:)``.
/// - Failover: with several actions endpoints (comma-separated in
///   ``ActionClientConfiguration/actionsEndpoint``), a lost authority (no connection for
///   ``ActionClientConfiguration/failoverAfter``, or no `pong` within the timeout) makes the
///   client move to the next endpoint, round robin, and resend every unacknowledged action with
///   the same `(client_id, client_seq)`; the new authority's copy of the client ledger acks each
///   with its original `action_seq` or applies it once.
/// - Task cancellation is not observed: a sent action cannot be taken back, so every call ends
///   with its answer, a refusal, a timeout or ``ClientError/closed``.
///
/// ```swift
/// let client = try ActionClient<Counter>(configuration: .init(actionsEndpoint: "tcp://127.0.0.1:7001"), context: context)
/// try client.start()
/// let ack = try await client.send(.countUp)
/// client.close()
/// ```
public final class ActionClient<R: Reactor>: Sendable {
    /// The configuration, with the window clamped to what the protocol allows.
    public let configuration: ActionClientConfiguration
    private let logger: Logger
    private let context: ZMQContext
    private let runtime: NodeRuntime
    private let mailbox: Mailbox<ClientLoop.Command>
    /// The loop's counters, published once per turn (for tests).
    let diagnostics = NodeMetrics(ClientDiagnostics())

    /// Creates a client; nothing connects until ``start()``.
    ///
    /// - Throws: ``ClientError/invalidArgument(_:)`` for a client id outside 1–64 bytes, negative
    ///   retries or a non-positive timeout; ``ClientError/transport(_:)`` when descriptors run out.
    public init(configuration: ActionClientConfiguration, logger: Logger = Logger(label: "client"), context: ZMQContext) throws(ClientError) {
        self.configuration = try configuration.validated()
        self.logger = logger
        self.context = context
        runtime = NodeRuntime(name: "client \(configuration.clientID.prefix(8))")
        do {
            try runtime.prepare()
            mailbox = try Mailbox.forNode()
        } catch {
            throw .transport(error)
        }
    }

    deinit {
        close()
    }

    /// Starts the loop thread, which creates the DEALER and connects it.
    ///
    /// Returns once the socket is connecting; the connection itself is made in the background
    /// and actions sent meanwhile wait in the client until the handshake completes (at most
    /// ``ActionClientConfiguration/connectTimeout``). Calling it again does nothing.
    /// - Throws: ``ClientError/transport(_:)`` when the socket cannot be created or the endpoint
    ///   is invalid (`EINVAL`, `EPROTONOSUPPORT`, `ETERM`); ``ClientError/closed`` after ``close()``.
    public func start() throws(ClientError) {
        if runtime.isStopping { throw .closed }
        let (configuration, logger, context, mailbox, diagnostics) = (configuration, logger, context, mailbox, diagnostics)
        let startup = try runtime.start(mailboxFailure: ClientError.transport) { runtime, poller throws(ClientError) in
            do throws(ZMQError) {
                return try ClientLoop(configuration: configuration, logger: logger, context: context, mailbox: mailbox,
                                      runtime: runtime, poller: poller, diagnostics: diagnostics)
            } catch {
                throw .transport(error)
            }
        } run: { $0.run() }
        if case .alreadyStarted = startup, runtime.isStopping || runtime.isFinished { throw .closed }
    }

    /// Runs the client as a service: starts it, returns once it is closed; cancelling the task
    /// closes it like ``close()``.
    ///
    /// - Throws: what ``start()`` throws.
    public func run() async throws {
        try start()
        await runtime.serve { [self] in close() }
    }

    /// Sends an action and returns the authority's ack.
    ///
    /// - Throws: ``ClientError``: `refused` (e.g. `bad_action`, `stale`, or `busy` past the give-up
    ///   time), `timedOut`, `unreachable`, `closed`, `transport`, or `invalidArgument` when the
    ///   action does not encode or is too large.
    public func send(_ action: R.Action) async throws(ClientError) -> ActionAck {
        let payload: [UInt8]
        do {
            payload = try MessagePackEncoder().encode(action)
        } catch {
            throw .invalidArgument("the action does not encode as MessagePack: \(error)")
        }
        return try await send(encoded: payload)
    }

    /// Sends an action already encoded as MessagePack (the CLI builds these from JSON).
    ///
    /// The authority checks that it decodes as the app's action and refuses it with `bad_action` if not.
    public func send(encoded payload: [UInt8]) async throws(ClientError) -> ActionAck {
        guard payload.count <= configuration.maxMessageBytes else {
            throw .invalidArgument("the action is \(payload.count) bytes, over maxMessageBytes (\(configuration.maxMessageBytes))")
        }
        let result = await withUnsafeContinuation { (continuation: ClientLoop.ActionContinuation) in
            if !runtime.admit({ mailbox.post(.action(payload: payload, continuation: continuation)) }) {
                continuation.resume(returning: .failure(refusedOrClosed))
            }
        }
        return try result.get()
    }

    /// Fetches the authority's current state and decodes it as this reactor's state.
    public func snapshot() async throws(ClientError) -> Snapshot<R.State> {
        let raw = try await snapshotPayload()
        do {
            return Snapshot(version: raw.version, state: try MessagePackDecoder().decode(R.State.self, from: raw.payload))
        } catch {
            throw .badReply(ProtocolError(.malformed, "the snapshot of app '\(raw.app)' does not decode as \(R.State.self): \(error)"))
        }
    }

    /// Fetches the authority's current state as the MessagePack bytes it sent, with its version,
    /// action sequence number and app name.
    ///
    /// The state comes in chunks of at most ``ActionClientConfiguration/maxMessageBytes`` (and
    /// 1 MiB), one asked for after the other (`snapshot_chunk`), so a state of any size arrives;
    /// from an authority that predates chunks (`unknown_kind`) it is fetched whole. A chunk
    /// version the authority no longer holds (`expired`) starts the fetch again, at most 3 times.
    public func snapshotPayload() async throws(ClientError) -> (version: UInt64, actionSeq: UInt64, app: String, payload: [UInt8]) {
        let chunkBytes = UInt64(max(1, min(configuration.maxMessageBytes, 1 << 20)))
        var restarts = 0
        restart: while true {
            var assembled: [UInt8] = []
            var held: (version: UInt64, actionSeq: UInt64, app: String, total: UInt64)?
            while held.map({ UInt64(assembled.count) < $0.total }) ?? true {
                let reply: AuthorityReply
                do {
                    reply = try await request(.snapshotChunk(version: held?.version, offset: UInt64(assembled.count), maxBytes: chunkBytes))
                } catch .refused(.unknownKind, _) where held == nil {
                    return try await wholeSnapshotPayload()
                } catch .refused(.expired, _) where restarts < 3 {
                    restarts += 1
                    continue restart
                }
                guard case .snapshotChunk(_, let version, let actionSeq, let app, let total, let offset, let payload) = reply,
                      offset == UInt64(assembled.count), held.map({ $0.version == version && $0.total == total }) ?? true,
                      !payload.isEmpty || total == 0, UInt64(assembled.count + payload.count) <= total
                else {
                    throw .badReply(ProtocolError(.malformed, "a snapshot chunk does not continue the state fetched so far"))
                }
                if held == nil {
                    held = (version, actionSeq, app, total)
                    assembled.reserveCapacity(Int(clamping: total))
                }
                assembled += payload
            }
            guard let held else { continue restart }
            return (held.version, held.actionSeq, held.app, assembled)
        }
    }

    /// The state in one `snapshot` reply (authorities before `snapshot_chunk`).
    private func wholeSnapshotPayload() async throws(ClientError) -> (version: UInt64, actionSeq: UInt64, app: String, payload: [UInt8]) {
        guard case .snapshot(_, let version, let actionSeq, let app, let payload) = try await request(.snapshot) else {
            throw .badReply(ProtocolError(.unknownKind, "expected a snapshot"))
        }
        return (version, actionSeq, app, payload)
    }

    /// Checks that the authority answers; returns its current state version.
    public func ping() async throws(ClientError) -> UInt64 {
        guard case .pong(_, let version, _, _, _, _, _) = try await request(.ping) else {
            throw .badReply(ProtocolError(.unknownKind, "expected a pong"))
        }
        return version
    }

    /// Why the client stopped on its own: a ``ProtocolError`` with code ``ErrorCode/wrongApp``
    /// when ``ActionClientConfiguration/appName`` is set and the authority serves another app
    /// or schema (every call then fails with `refused(wrong_app)`, later ones too). `nil` while
    /// it runs and after ``close()``.
    public var failure: (any Error)? { runtime.failure.error }

    /// Fetches the authority's counters.
    public func stats() async throws(ClientError) -> [String: UInt64] {
        guard case .stats(_, let counters) = try await request(.stats) else {
            throw .badReply(ProtocolError(.unknownKind, "expected stats"))
        }
        return counters
    }

    /// Stops the client: calls not yet answered fail with ``ClientError/closed`` and the socket
    /// is closed on the loop thread. Idempotent; safe from any thread. Use ``wait()`` to know
    /// when the socket is closed.
    public func close() {
        runtime.refuseCalls()
        runtime.stop()
    }

    /// Returns once the loop thread has closed its socket and answered every call (at once if
    /// the client never started).
    public func wait() async {
        await runtime.wait()
    }

    /// Why a call made after the loop ended fails: the refusal that ended it, if the authority
    /// serves another app or schema, else `closed`.
    private var refusedOrClosed: ClientError {
        guard let refusal = runtime.failure.error as? ProtocolError, refusal.code == .wrongApp else { return .closed }
        return .refused(code: .wrongApp, message: refusal.message)
    }

    private func request(_ kind: ClientRequestKind) async throws(ClientError) -> AuthorityReply {
        let result = await withUnsafeContinuation { (continuation: ClientLoop.ReplyContinuation) in
            if !runtime.admit({ mailbox.post(.request(kind, continuation: continuation)) }) {
                continuation.resume(returning: .failure(refusedOrClosed))
            }
        }
        return try result.get()
    }
}
