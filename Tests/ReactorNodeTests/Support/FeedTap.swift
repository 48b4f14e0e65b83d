import ReactorBus
import ReactorCore
import ReactorWire
import TestSupport
import ZeroMQ

/// A SUB socket on an authority's feed, read synchronously by one test with deadlines.
final class FeedTap {
    private let context: ZMQContext
    private let socket: ZMQSocket
    private(set) var messages: [FeedMessage] = []

    init(feed: String, topics: [String]) throws {
        context = try ZMQContext()
        socket = try ZMQSocket(context: context, type: .sub)
        try socket.set(.linger, 0)
        try socket.set(.receiveHighWaterMark, 0)
        for topic in topics + [FeedMessage.Topic.heartbeat] { try socket.set(.subscribe, topic) }
        try socket.connect(feed)
    }

    deinit {
        socket.close()
        context.terminate(timeout: .seconds(2))
    }

    /// Reads until `done` holds over what was read, or the deadline; returns whether it held.
    @discardableResult
    func read(timeout: Duration, until done: ([FeedMessage]) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !done(messages) {
            guard let frames = try await socket.receiveMultipart(before: deadline) else { return false }
            if let message = try? FeedMessage(frames: frames) { messages.append(message) }
        }
        return true
    }

    /// Waits until the subscription is live (a heartbeat arrived).
    func waitUntilSubscribed() async throws -> Bool {
        try await read(timeout: .seconds(5)) { messages in
            messages.contains { if case .heartbeat = $0 { true } else { false } }
        }
    }

    /// The mutations read so far.
    var mutations: [(version: UInt64, actionSeq: UInt64, origin: MutationOrigin, payload: [UInt8])] {
        messages.compactMap { message in
            if case .mutation(let version, let actionSeq, let origin, let payload) = message { (version, actionSeq, origin, payload) } else { nil }
        }
    }
}
