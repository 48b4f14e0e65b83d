import ReactorCore
import ReactorWire
import ZeroMQ

/// The authority's feed socket: publishes snapshots, mutations and heartbeats, and knows which
/// topics anyone subscribed to, so it does not encode what nobody reads.
///
/// An XPUB socket behaves like PUB for subscribers, and also passes their subscriptions up
/// (the first subscription to a topic and the last unsubscription, by ZeroMQ's default).
/// Sends never block: a subscriber that does not keep up loses messages at its high-water mark
/// and catches up with the next snapshot or heartbeat.
///
/// Each subscriber's queue is bounded in bytes, not only in messages. libzmq counts its
/// high-water mark in messages, so the publisher derives it from the byte budget and the
/// largest message it has published so far: `queueBytes / (largest + overhead)`, capped by
/// `maxHighWaterMark`, never below 2. Every queued message is at most that largest one, so a
/// stalled subscriber's queue holds at most `queueBytes`. The mark only ever goes down, and it
/// goes down before the larger message is sent; libzmq (4.2.3 and later) applies a changed
/// `ZMQ_SNDHWM` to the pipes of subscribers already connected, not only to new ones. With a large
/// state that mark is small, so a slow subscriber loses messages early; each snapshot holds the
/// whole state and every message carries the version, so it resynchronises.
final class FeedPublisher {
    /// What libzmq holds per queued message besides its bytes: three `zmq_msg_t` (64 bytes each)
    /// in the pipe and an allocation header per frame longer than 33 bytes.
    static let messageOverhead = 256

    private let socket: ZMQSocket
    private let writer = HeaderWriter()
    private let queueBytes: Int
    private let maxHighWaterMark: Int
    private var prefixes: Set<[UInt8]> = []
    /// When something was last published (monotonic milliseconds).
    private(set) var lastPublished: UInt64 = 0
    /// The version of the last published snapshot.
    private(set) var lastSnapshotVersion: UInt64?
    /// The largest message published so far, frames' bytes plus ``messageOverhead``.
    private(set) var largestMessage = 0
    /// The high-water mark currently set on the socket, in messages per subscriber.
    private(set) var highWaterMark: Int
    /// Whether anyone subscribed to snapshots, to mutations, to job events: ``wants(_:)`` for
    /// those topics, worked out when subscriptions change rather than on every turn.
    private(set) var wantsSnapshots = false
    private(set) var wantsMutations = false
    private(set) var wantsJobs = false
    /// The reactor's projections and their topics.
    private let projectionTopics: [(name: String, topic: String)]
    /// The projections someone subscribed to, likewise worked out when subscriptions change.
    private(set) var wantedProjections: Set<String> = []

    /// Sets the initial high-water mark (`maxHighWaterMark`, or less if `queueBytes` holds fewer
    /// messages of the smallest size); call before the socket binds. `projections`: the names
    /// of the reactor's projections, each published on its own topic.
    init(socket: ZMQSocket, queueBytes: Int, maxHighWaterMark: Int, projections: [String] = []) throws(ZMQError) {
        self.socket = socket
        projectionTopics = projections.map { ($0, FeedMessage.Topic.projection($0)) }
        self.queueBytes = max(1, queueBytes)
        self.maxHighWaterMark = max(2, maxHighWaterMark)
        highWaterMark = Self.highWaterMark(queueBytes: self.queueBytes, messageBytes: Self.messageOverhead, cap: self.maxHighWaterMark)
        try socket.set(.sendHighWaterMark, highWaterMark)
    }

    /// The most messages of `messageBytes` each that fit `queueBytes`, within `2...cap`.
    static func highWaterMark(queueBytes: Int, messageBytes: Int, cap: Int) -> Int {
        min(cap, max(2, queueBytes / max(1, messageBytes)))
    }

    /// Whether any subscriber's prefix matches `topic`.
    func wants(_ topic: String) -> Bool {
        let bytes = Array(topic.utf8)
        return prefixes.contains { bytes.starts(with: $0) }
    }

    /// Reads pending subscription changes.
    func readSubscriptions() throws(ZMQError) {
        while let frames = try socket.tryReceiveMultipart() {
            guard let frame = frames.first, let flag = frame.first else { continue }
            let prefix = Array(frame.dropFirst())
            if flag == 1 { prefixes.insert(prefix) } else if flag == 0 { prefixes.remove(prefix) }
            wantsSnapshots = wants(FeedMessage.Topic.snapshot)
            wantsMutations = wants(FeedMessage.Topic.mutation)
            wantsJobs = wants(FeedMessage.Topic.job)
            wantedProjections = Set(projectionTopics.filter { wants($0.topic) }.map(\.name))
        }
    }

    /// Publishes one message, first lowering the high-water mark if it is the largest yet.
    ///
    /// - Returns: the bytes of its frames (what the socket was handed, whoever subscribed).
    @discardableResult
    func publish(_ message: FeedMessage, now: UInt64) throws(ZMQError) -> Int {
        let frames = message.frames(writer)
        let bytes = frames.reduce(0) { $0 + $1.count }
        let size = Self.messageOverhead + bytes
        if size > largestMessage {
            largestMessage = size
            let mark = Self.highWaterMark(queueBytes: queueBytes, messageBytes: size, cap: maxHighWaterMark)
            if mark < highWaterMark {
                try socket.set(.sendHighWaterMark, mark)
                highWaterMark = mark
            }
        }
        _ = try socket.trySend(frames)
        lastPublished = now
        if case .snapshot(let version, _, _) = message { lastSnapshotVersion = version }
        return bytes
    }
}
