import Foundation
@testable import ReactorBus
import ReactorCore
import ReactorWire
import Synchronization
import Testing
import ZeroMQ
import TestSupport

/// A stand-in for the authority's workers socket: a ROUTER bound on an ephemeral loopback port,
/// owned by a thread of its own, that records what workers send and sends what a test asks.
///
/// The test never touches the socket: it posts commands through a mailbox and reads the
/// recorded messages under a lock, awaiting them with a deadline (suspending, never blocking
/// the cooperative pool that the worker's effects run on).
final class FakeWorkerAuthority: Sendable {
    /// One message a worker sent.
    struct Received: Sendable {
        let peer: PeerID
        /// `nil` when the frames did not decode as a worker message.
        let message: WorkerMessage?
        /// Monotonic milliseconds at receipt.
        let at: UInt64
    }

    private enum Command: Sendable {
        case send([[UInt8]])
        case stop
    }

    private struct Inbox {
        var messages: [Received] = []
        var heartbeats: [Received] = []
        /// `reports` messages received; their reports are in ``messages``, one by one.
        var reportBatches = 0
    }

    /// What the fake's thread and the test share.
    private final class Shared: Sendable {
        let inbox = Mutex(Inbox())
        let answersHeartbeats = Atomic<Bool>(true)
        /// When not 0: the heartbeat interval of the welcome the next `ready` gets at once.
        let welcomeNextReady = Atomic<UInt64>(0)
        let finished = DispatchSemaphore(value: 0)
    }

    /// The resolved endpoint (`tcp://127.0.0.1:PORT`) workers connect to.
    let endpoint: String
    private let commands: Mailbox<Command>
    private let shared = Shared()

    /// Binds the ROUTER on its thread and returns once it listens.
    init(context: ZMQContext) throws {
        let commands = try Mailbox<Command>()
        let bound = DispatchSemaphore(value: 0)
        let outcome = Box<Result<String, ZMQError>?>(nil)
        self.commands = commands
        let shared = self.shared
        Thread.detachNewThread {
            defer { shared.finished.signal() }
            let socket: ZMQSocket
            do {
                socket = try ZMQSocket(context: context, type: .router)
                try socket.set(.linger, 0)
                try socket.bind("tcp://127.0.0.1:*")
                outcome.value = .success(try socket.get(.lastEndpoint))
            } catch let error as ZMQError {
                outcome.value = .failure(error)
                bound.signal()
                return
            } catch {
                bound.signal()
                return
            }
            bound.signal()
            defer { socket.close() }
            Self.serve(socket, commands: commands, shared: shared)
        }
        guard bound.wait(timeout: .now() + .seconds(10)) == .success, let result = outcome.value else {
            throw ZMQError(code: ETIMEDOUT, function: "FakeWorkerAuthority.init")
        }
        endpoint = try result.get()
    }

    private static func serve(_ socket: ZMQSocket, commands: Mailbox<Command>, shared: Shared) {
        let writer = HeaderWriter()
        do {
            let poller = ZMQPoller()
            let socketItem = try poller.register(socket)
            let commandItem = poller.register(commands)
            // Bounded: a test that forgets to close its fake still ends it within a minute.
            let deadline = MonotonicClock.milliseconds() + 60_000
            while MonotonicClock.milliseconds() < deadline {
                try poller.poll(timeout: 100)
                if poller.isReadable(commandItem) {
                    for command in commands.drain() {
                        switch command {
                        case .send(let frames): _ = try socket.trySend(frames)
                        case .stop: return
                        }
                    }
                }
                guard poller.isReadable(socketItem) else { continue }
                while let frames = try socket.tryReceiveMultipart(), let routing = frames.first {
                    let peer = PeerID(routing)
                    let message = try? WorkerMessage(frames: Array(frames.dropFirst()))
                    let received = Received(peer: peer, message: message, at: MonotonicClock.milliseconds())
                    if message == .heartbeat {
                        shared.inbox.withLock { $0.heartbeats.append(received) }
                        if shared.answersHeartbeats.load(ordering: .acquiring) {
                            _ = try socket.trySend([peer.bytes] + AuthorityToWorker.heartbeat().frames(writer))
                        }
                    } else if case .reports(let reports)? = message {
                        // Each report as if it had come alone, in order (what it means).
                        shared.inbox.withLock { inbox in
                            inbox.reportBatches += 1
                            inbox.messages += reports.map { Received(peer: peer, message: $0, at: received.at) }
                        }
                    } else {
                        shared.inbox.withLock { $0.messages.append(received) }
                        if case .ready? = message {
                            let interval = shared.welcomeNextReady.exchange(0, ordering: .acquiringAndReleasing)
                            if interval > 0 {
                                shared.answersHeartbeats.store(true, ordering: .releasing)
                                _ = try socket.trySend([peer.bytes] + AuthorityToWorker.welcome(heartbeatMilliseconds: interval).frames(writer))
                            }
                        }
                    }
                }
            }
        } catch {
            // The context was terminated under us: nothing more to serve.
        }
    }

    /// Sends `message` to `peer`.
    func send(_ message: AuthorityToWorker, to peer: PeerID) {
        commands.post(.send([peer.bytes] + message.frames(HeaderWriter())))
    }

    /// Sends raw frames (after the routing id) to `peer`.
    func sendRaw(_ frames: [[UInt8]], to peer: PeerID) {
        commands.post(.send([peer.bytes] + frames))
    }

    /// Stops (or resumes) answering heartbeats, so the worker hears nothing at all.
    func setAnswersHeartbeats(_ answers: Bool) {
        shared.answersHeartbeats.store(answers, ordering: .releasing)
    }

    /// Answers the next `ready` at once, from the fake's own thread, with a welcome of this
    /// heartbeat interval, and answers heartbeats again from then on: a silence that ends when
    /// the worker registers again, however late the test task runs.
    func welcomeNextReady(heartbeatMilliseconds: UInt64) {
        shared.welcomeNextReady.store(max(heartbeatMilliseconds, 1), ordering: .releasing)
    }

    /// Removes and returns the oldest message other than a heartbeat, waiting up to `timeout`.
    func next(within timeout: Duration = promptly) async -> Received? {
        await eventually(within: timeout) {
            shared.inbox.withLock { inbox in inbox.messages.isEmpty ? nil : inbox.messages.removeFirst() }
        }
    }

    /// How many `reports` messages came (their reports are taken one by one with ``next(within:)``).
    var reportBatches: Int { shared.inbox.withLock { $0.reportBatches } }

    /// The heartbeats received so far.
    var heartbeats: [Received] { shared.inbox.withLock { $0.heartbeats } }

    /// The messages other than heartbeats that nobody took with ``next(within:)`` yet.
    var unread: [Received] { shared.inbox.withLock { $0.messages } }

    /// Takes the worker's `ready`, answers `welcome`, and returns the worker's routing id.
    func register(heartbeatMilliseconds: UInt64 = 1_000) async throws -> PeerID {
        let ready = try #require(await next())
        guard case .ready? = ready.message else {
            Issue.record("expected ready, got \(String(describing: ready.message))")
            throw CancellationError()
        }
        send(.welcome(heartbeatMilliseconds: heartbeatMilliseconds), to: ready.peer)
        return ready.peer
    }

    /// Stops the thread and closes the socket; returns once both are done (bounded).
    func close() {
        commands.post(.stop)
        _ = shared.finished.wait(timeout: .now() + .seconds(10))
    }
}
