import Foundation
@testable import ReactorBus
import ReactorCore
import ReactorWire
import Synchronization
import ZeroMQ

/// A hostile worker: a DEALER on the authority's workers socket that announces a huge capacity,
/// keeps heartbeating so it is never found dead, and takes every job without ever reporting one.
///
/// It runs on a thread of its own (the socket never leaves it) and only counts what it gets;
/// ``stop()`` (or dropping it) closes it within one poll interval.
final class GreedyWorker: Sendable {
    private final class Shared: Sendable {
        let stopping = Atomic<Bool>(false)
        let welcomed = Atomic<Bool>(false)
        let jobs = Mutex<[JobID]>([])
        let failure = Mutex<String?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let stopped = Atomic<Bool>(false)
    }

    private let shared = Shared()

    /// Connects to `endpoint` and announces `capacity` under `name`.
    init(endpoint: String, app: String, name: String = "greedy", capacity: UInt64 = 1_000_000) {
        let shared = self.shared
        Thread.detachNewThread {
            defer { shared.finished.signal() }
            do {
                try Self.serve(endpoint: endpoint, ready: .ready(name: name, app: app, capacity: capacity, kinds: []), shared: shared)
            } catch {
                shared.failure.withLock { $0 = "\(error)" }
            }
        }
    }

    deinit { stop() }

    private static func serve(endpoint: String, ready: WorkerMessage, shared: Shared) throws {
        let context = try ZMQContext()
        defer { _ = context.terminate(timeout: .seconds(2)) }
        let socket = try ZMQSocket(context: context, type: .dealer)
        defer { socket.close() }
        try socket.set(.linger, 0)
        try socket.connect(endpoint)
        let writer = HeaderWriter()
        _ = try socket.trySend(ready.frames(writer))
        let poller = ZMQPoller()
        let item = try poller.register(socket)
        var nextHeartbeat = MonotonicClock.milliseconds() + 200
        // Bounded: a test that forgets to stop it still ends it within two minutes.
        let deadline = MonotonicClock.milliseconds() + 120_000
        while !shared.stopping.load(ordering: .acquiring), MonotonicClock.milliseconds() < deadline {
            _ = try poller.poll(timeout: 100)
            if poller.isReadable(item) {
                while let frames = try socket.tryReceiveMultipart() {
                    switch try? AuthorityToWorker(frames: frames) {
                    case .job(let job, _, _)?: shared.jobs.withLock { $0.append(job) }
                    case .welcome?: shared.welcomed.store(true, ordering: .releasing)
                    default: break
                    }
                }
            }
            let now = MonotonicClock.milliseconds()
            if now >= nextHeartbeat {
                _ = try socket.trySend(WorkerMessage.heartbeat.frames(writer))
                nextHeartbeat = now + 200
            }
        }
    }

    /// Whether the authority answered `ready` with `welcome`.
    var isWelcomed: Bool { shared.welcomed.load(ordering: .acquiring) }

    /// Every job it was given, in arrival order.
    var jobs: [JobID] { shared.jobs.withLock { $0 } }

    /// Why its thread ended early, if it did.
    var failure: String? { shared.failure.withLock { $0 } }

    /// Waits until `welcome` came, at most `timeout`.
    func waitForWelcome(timeout: Duration = .seconds(15)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isWelcomed, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return isWelcomed
    }

    /// Closes the socket and waits for its thread (at most a few seconds). Idempotent.
    func stop() {
        shared.stopping.store(true, ordering: .releasing)
        guard !shared.stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = shared.finished.wait(timeout: .now() + .seconds(5))
    }
}
