import Foundation
import Glibc
import MessagePack
import ReactorCore
import ReactorLog
import ReactorWire
import Synchronization
import SystemCalls
import ZeroMQ

/// The inspector's subscription to an authority's feed: a thread of its own with a SUB socket on
/// `mutation` and `heartbeat`, decoding each mutation as the app's and handing it to the
/// history. When the history needs a snapshot (at start, after a gap) it calls `needSnapshot`.
///
/// Subscribing only, it never sends anything to the authority; its receive queue is bounded
/// (the feed's own high-water mark), so a slow inspector loses messages and refetches, it never
/// slows the authority.
final class InspectorFeed<R: Reactor>: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let finished = Mutex<Bool>(false)

    /// Why the subscription stopped on its own (a socket that could not be made or connected).
    let failure = Mutex<ZMQError?>(nil)

    /// Starts the thread; it connects to `endpoint` and runs until ``stop()``.
    /// `failed` is called, on the feed's thread, if the subscription stops on its own.
    init(endpoint: String, context: ZMQContext, history: InspectorHistory<R>, logger: Logger,
         needSnapshot: @escaping @Sendable () -> Void, failed: @escaping @Sendable () -> Void) {
        // The socket is made on the thread that uses it: ZeroMQ sockets are not thread-safe.
        let thread = Thread { [self] in
            ThreadName.setCurrent("inspect-feed")
            do throws(ZMQError) {
                let socket = try ZMQSocket(context: context, type: .sub)
                defer { socket.close() }
                try socket.set(.linger, 0)
                try socket.set(.receiveHighWaterMark, 100_000)
                try socket.set(.subscribe, FeedMessage.Topic.mutation)
                try socket.set(.subscribe, FeedMessage.Topic.heartbeat)
                try socket.set(.subscribe, FeedMessage.Topic.job)
                try socket.connect(endpoint)
                try run(socket, history: history, needSnapshot: needSnapshot)
            } catch {
                logger.error("inspect: the feed subscription to \(endpoint) failed: \(error)")
                failure.withLock { $0 = error }
                failed()
            }
            finished.withLock { $0 = true }
        }
        thread.name = "inspect-feed"
        thread.start()
    }

    /// Stops the thread (it closes its socket within about 100 ms).
    func stop() {
        stopping.store(true, ordering: .relaxed)
    }

    /// Stops the thread and waits (at most `timeout`) until it has closed its socket, so that
    /// the ZeroMQ context can be terminated after.
    func stopAndWait(timeout: Duration = .seconds(2)) {
        stop()
        let deadline = ContinuousClock.now + timeout
        while !finished.withLock({ $0 }) && ContinuousClock.now < deadline { usleep(10_000) }
    }

    private func run(_ socket: ZMQSocket, history: InspectorHistory<R>, needSnapshot: @Sendable () -> Void) throws(ZMQError) {
        let poller = ZMQPoller()
        _ = try poller.register(socket)
        needSnapshot()
        let decoder = MessagePackDecoder()
        while !stopping.load(ordering: .relaxed) {
            guard try poller.poll(timeout: 100) > 0 else { continue }
            var received = 0
            while received < 10_000, let frames = try socket.tryReceiveMultipart() {
                received += 1
                guard let message = try? FeedMessage(frames: frames) else {
                    history.countMalformed()
                    continue
                }
                switch message {
                case .mutation(let version, let actionSeq, let origin, let payload):
                    guard let mutation = try? decoder.decode(R.Mutation.self, from: payload) else {
                        history.countMalformed()
                        continue
                    }
                    let recorded = InspectorHistory<R>.Recorded(version: version, actionSeq: actionSeq, origin: origin, mutation: mutation,
                                                                 seenAt: InspectorHistory<R>.now())
                    if history.receive(recorded) { needSnapshot() }
                case .heartbeat(let version, let actionSeq), .snapshot(let version, let actionSeq, _):
                    if history.heartbeat(version: version, actionSeq: actionSeq) { needSnapshot() }
                case .job(let event):
                    history.noteJob(event)
                case .projection:
                    continue  // not subscribed: the inspector shows the whole state, not the app's projections
                }
            }
        }
    }
}
