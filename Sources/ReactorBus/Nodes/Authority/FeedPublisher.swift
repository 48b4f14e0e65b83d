import ReactorCore

/// The authority's feed socket: publishes snapshots, mutations and heartbeats, and knows which
/// topics anyone subscribed to, so it does not encode what nobody reads.
///
/// An XPUB socket behaves like PUB for subscribers, and also passes their subscriptions up
/// (the first subscription to a topic and the last unsubscription, by ZeroMQ's default).
/// Sends never block: a subscriber that does not keep up loses messages at its high-water mark
/// and catches up with the next snapshot or heartbeat.
final class FeedPublisher {
    private let socket: ZMQSocket
    private let writer = HeaderWriter()
    private var prefixes: Set<[UInt8]> = []
    /// When something was last published (monotonic milliseconds).
    private(set) var lastPublished: UInt64 = 0
    /// The version of the last published snapshot.
    private(set) var lastSnapshotVersion: UInt64?

    init(socket: ZMQSocket) {
        self.socket = socket
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
        }
    }

    /// Publishes one message.
    func publish(_ message: FeedMessage, now: UInt64) throws(ZMQError) {
        _ = try socket.trySend(message.frames(writer))
        lastPublished = now
        if case .snapshot(let version, _, _) = message { lastSnapshotVersion = version }
    }
}
