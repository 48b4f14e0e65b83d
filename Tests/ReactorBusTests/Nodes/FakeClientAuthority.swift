import Foundation
import MessagePack
@testable import ReactorBus
import ReactorLog
import ReactorWire
import Synchronization
import Testing
import ZeroMQ
import TestSupport

/// A stand-in for the authority in client and observer tests: a ROUTER for actions and requests
/// and an XPUB for the feed (so tests can wait until an observer's subscriptions have arrived
/// instead of sleeping), both on ephemeral loopback ports and driven by one loop thread.
///
/// By default it answers like the authority: actions are acked idempotently (a resend of the
/// same `(client_id, client_seq)` gets the original ack), `snapshot`, `ping` and `stats` are
/// answered from ``setSnapshot(version:actionSeq:payload:)`` and ``counters``. A handler can
/// ignore or answer differently per message.
final class FakeClientAuthority: Sendable {
    /// What to do with one received message.
    enum Response: Sendable {
        /// Answer as the authority would.
        case answer
        /// Do not answer.
        case ignore
        /// Send these answers instead.
        case reply([AuthorityReply])
    }

    /// Decides the response; `copy` is 1 for the first time this `(client_id, client_seq)` or
    /// request arrived, 2 for its first resend, ...
    typealias Handler = @Sendable (_ message: ClientMessage, _ copy: Int) -> Response

    /// What the fake has seen, for assertions.
    struct Record: Sendable {
        var received: [ClientMessage] = []
        var copies: [String: Int] = [:]
        var acks: [String: (actionSeq: UInt64, version: UInt64)] = [:]
        var acksSent: [UInt64: Int] = [:]
        var subscriptions: [String] = []
        /// The features each `features` request named, in order (not in ``received``).
        var features: [[String]] = []
        var actionsReceivedAtLastAnswer: Int?

        var actions: [(clientID: String, clientSeq: UInt64, payload: [UInt8])] {
            received.compactMap { message in
                guard case .action(let id, let seq, let payload) = message else { return nil }
                return (id, seq, payload)
            }
        }

        /// Snapshot fetches: `snapshot` requests and `snapshot_chunk` requests for the current state.
        var snapshotRequests: Int {
            received.filter {
                switch $0 {
                case .snapshot, .snapshotChunk(_, nil, _, _): true
                default: false
                }
            }.count
        }
    }

    private enum Command: Sendable {
        case publish([[UInt8]])
        case answer(AuthorityReply)
    }

    private struct Answers: Sendable {
        var nextActionSeq: UInt64 = 1
        var snapshot: (version: UInt64, actionSeq: UInt64, payload: [UInt8]) = (0, 0, [0x80])
        var counters: [String: UInt64] = [:]
    }

    let actionsEndpoint: String
    let feedEndpoint: String
    private let runtime: NodeRuntime
    private let commands: Mailbox<Command>
    private let shared: Shared

    private init(actionsEndpoint: String, feedEndpoint: String, runtime: NodeRuntime, commands: Mailbox<Command>, shared: Shared) {
        self.actionsEndpoint = actionsEndpoint
        self.feedEndpoint = feedEndpoint
        self.runtime = runtime
        self.commands = commands
        self.shared = shared
    }

    /// Binds both sockets and starts the loop; `actions` picks the actions endpoint (to restart
    /// a fake where a stopped one listened), by default an ephemeral port.
    static func start(context: ZMQContext, actions: String = "tcp://127.0.0.1:*",
                      handler: @escaping Handler = { _, _ in .answer }) async throws -> FakeClientAuthority {
        let runtime = NodeRuntime(name: "fake authority")
        let commands = try Mailbox<Command>()
        let shared = Shared()
        let startup = try await runtime.start { runtime, poller in
            try Loop.make(context: context, actions: actions, runtime: runtime, poller: poller, commands: commands, shared: shared, handler: handler)
        } run: { $0.run() }
        guard case .ready(let endpoints) = startup else { throw NodeError.alreadyStarted("fake authority") }
        return FakeClientAuthority(actionsEndpoint: endpoints.actions, feedEndpoint: endpoints.feed, runtime: runtime, commands: commands, shared: shared)
    }

    /// Stops the loop and waits until both sockets are closed.
    func stop() async {
        runtime.stop()
        await runtime.wait()
    }

    /// The start id this fake sends in `pong`.
    var startID: UInt64 { shared.startID }

    /// A copy of everything recorded so far.
    var recorded: Record { shared.record.withLock { $0 } }

    /// Makes `snapshot`/`ping` answers report this state.
    func setSnapshot(version: UInt64, actionSeq: UInt64, payload: [UInt8]) {
        shared.answers.withLock { $0.snapshot = (version, actionSeq, payload) }
    }

    /// The counters `stats` answers with.
    func setCounters(_ counters: [String: UInt64]) {
        shared.answers.withLock { $0.counters = counters }
    }

    /// Publishes a feed message.
    func publish(_ message: FeedMessage) {
        commands.post(.publish(message.frames(HeaderWriter())))
    }

    /// Publishes arbitrary frames (for malformed feed messages).
    func publish(frames: [[UInt8]]) {
        commands.post(.publish(frames))
    }

    /// Sends `reply` to the peer that spoke last, after reading everything already queued, and
    /// records how many actions had arrived at that moment.
    func answer(_ reply: AuthorityReply) {
        commands.post(.answer(reply))
    }

    /// Waits until `condition` holds for the record, checking every few milliseconds; false on timeout.
    func eventually(within timeout: Duration = promptly, _ condition: (Record) -> Bool) async -> Bool {
        await Self.eventually(within: timeout) { condition(recorded) }
    }

    /// Waits until `condition` holds, checking every few milliseconds; false on timeout.
    static func eventually(within timeout: Duration = promptly, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }

    /// Runs `body` with a context and a started fake; afterwards stops the fake and requires the
    /// context to terminate within ``promptly`` (so every socket the body made must be closed).
    static func with(handler: @escaping Handler = { _, _ in .answer },
                     _ body: (ZMQContext, FakeClientAuthority) async throws -> Void) async throws {
        let context = try ZMQContext()
        let fake: FakeClientAuthority
        do {
            fake = try await start(context: context, handler: handler)
        } catch {
            #expect(context.terminate(timeout: promptly))
            throw error
        }
        let result: Result<Void, any Error>
        do {
            try await body(context, fake)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        await fake.stop()
        #expect(context.terminate(timeout: promptly))
        try result.get()
    }

    // MARK: Loop

    private final class Shared: Sendable {
        let record = Mutex(Record())
        let answers = Mutex(Answers())
        /// Like the authority's: drawn once per start, sent in every `pong`.
        let startID = UInt64.random(in: 1 ... .max)
    }

    /// The fake's loop on the skeleton every node uses: built on its thread, then run.
    private final class Loop: NodeLoop {
        struct Endpoints: Sendable { var actions: String, feed: String }
        let ready: Endpoints
        private let body: () -> Void

        private init(ready: Endpoints, body: @escaping () -> Void) {
            self.ready = ready
            self.body = body
        }

        func run() { body() }

        static func make(context: ZMQContext, actions: String, runtime: NodeRuntime, poller: NodePoller, commands: Mailbox<Command>,
                         shared: Shared, handler: @escaping Handler) throws -> Loop {
            let router = try ZMQSocket(context: context, type: .router)
            let pub = try ZMQSocket(context: context, type: .xpub)
            try router.set(.linger, 0)
            try pub.set(.linger, 0)
            try router.bind(actions)
            try pub.bind("tcp://127.0.0.1:*")
            _ = try poller.register(router)
            _ = try poller.register(pub)
            _ = poller.register(commands)
            let endpoints = Endpoints(actions: try router.get(.lastEndpoint), feed: try pub.get(.lastEndpoint))
            return Loop(ready: endpoints) { run(router: router, pub: pub, poller: poller, runtime: runtime, commands: commands, shared: shared, handler: handler) }
        }

        private static func run(router: ZMQSocket, pub: ZMQSocket, poller: NodePoller, runtime: NodeRuntime, commands: Mailbox<Command>,
                                shared: Shared, handler: Handler) {
            defer {
                router.close()
                pub.close()
            }
            let writer = HeaderWriter()
            var lastPeer: [UInt8] = []

            func readActions() throws {
                while let frames = try router.tryReceiveMultipart() {
                    lastPeer = frames[0]
                    guard let message = try? ClientMessage(frames: Array(frames.dropFirst())) else { continue }
                    let copy = shared.record.withLock { record -> Int in
                        let key: String
                        switch message {
                        case .action(let id, let seq, _): key = "\(id)/\(seq)"
                        case .snapshot(let id), .ping(let id), .stats(let id), .snapshotChunk(let id, _, _, _): key = "request/\(id)"
                        case .features(let id, let features):
                            // Kept apart: a client sends one on every connection, besides what a test counts.
                            record.features.append(features)
                            key = "request/\(id)"
                        }
                        if case .features = message {} else { record.received.append(message) }
                        record.copies[key, default: 0] += 1
                        return record.copies[key]!
                    }
                    let replies: [AuthorityReply]
                    switch handler(message, copy) {
                    case .ignore: replies = []
                    case .reply(let custom): replies = custom
                    case .answer: replies = [defaultAnswer(message)]
                    }
                    for reply in replies { try send(reply) }
                }
            }

            func defaultAnswer(_ message: ClientMessage) -> AuthorityReply {
                switch message {
                case .action(let id, let seq, _):
                    let key = "\(id)/\(seq)"
                    let known = shared.record.withLock { $0.acks[key] }
                    let ack = known ?? shared.answers.withLock { answers in
                        defer { answers.nextActionSeq += 1 }
                        return (answers.nextActionSeq, 100 + answers.nextActionSeq)
                    }
                    shared.record.withLock { $0.acks[key] = ack }
                    return .ack(clientSeq: seq, actionSeq: ack.actionSeq, version: ack.version)
                case .snapshot(let id):
                    let snapshot = shared.answers.withLock { $0.snapshot }
                    return .snapshot(requestID: id, version: snapshot.version, actionSeq: snapshot.actionSeq, app: "counter", payload: snapshot.payload)
                case .features(let id, _):
                    return .features(requestID: id, features: AuthorityFeature.forClients)
                case .ping(let id):
                    return .pong(requestID: id, version: shared.answers.withLock { $0.snapshot.version }, startID: shared.startID, app: "counter")
                case .stats(let id):
                    return .stats(requestID: id, counters: shared.answers.withLock { $0.counters })
                case .snapshotChunk(let id, let version, let offset, let maxBytes):
                    // Answered from the snapshot set now: a version it no longer is has expired.
                    let snapshot = shared.answers.withLock { $0.snapshot }
                    guard version == nil || version == snapshot.version else {
                        return .error(ref: id, code: .expired, message: "version \(version ?? 0) expired")
                    }
                    let start = Int(min(offset, UInt64(snapshot.payload.count)))
                    let end = start + Int(min(maxBytes, UInt64(snapshot.payload.count - start)))
                    return .snapshotChunk(requestID: id, version: snapshot.version, actionSeq: snapshot.actionSeq, app: "counter",
                                          totalBytes: UInt64(snapshot.payload.count), offset: UInt64(start), payload: Array(snapshot.payload[start..<end]))
                }
            }

            func send(_ reply: AuthorityReply) throws {
                if case .ack(let seq, _, _) = reply {
                    shared.record.withLock { $0.acksSent[seq, default: 0] += 1 }
                }
                try router.send([lastPeer] + reply.frames(writer))
            }

            do {
                while !runtime.isStopping {
                    try poller.wait(until: MonotonicClock.milliseconds() + 100)
                    try readActions()
                    while let frames = try pub.tryReceiveMultipart() {
                        guard let first = frames.first, first.first == 1 else { continue }
                        let topic = String(decoding: first.dropFirst(), as: UTF8.self)
                        shared.record.withLock { $0.subscriptions.append(topic) }
                    }
                    for command in commands.drain() {
                        switch command {
                        case .publish(let frames):
                            try pub.send(frames)
                        case .answer(let reply):
                            try readActions()
                            shared.record.withLock { $0.actionsReceivedAtLastAnswer = $0.actions.count }
                            try send(reply)
                        }
                    }
                }
            } catch {
                Issue.record("fake authority failed: \(error)")
            }
        }
    }
}
