import Glibc
import MessagePack
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
/// largest message it has published so far: `queueBytes / (largest + overhead)` rounded down to
/// a power of two, capped by `maxHighWaterMark`, never below 2. Every queued message is at most
/// that largest one, so a stalled subscriber's queue holds at most `queueBytes`. The mark only
/// ever goes down, and it goes down before the larger message is sent.
///
/// Lowering it means binding the endpoint again: subscribers connected then reconnect (libzmq
/// does it by itself, in about 0.1 s) and lose what was published meanwhile, the larger message
/// among it. libzmq 4.3 applies a changed `ZMQ_SNDHWM` to connected subscribers' pipes, but
/// their reader still acknowledges at multiples of the low-water mark of before: one that had
/// passed the last such multiple under the new mark was never acknowledged again, and lost every
/// message from then on, for as long as it stayed connected (a caught-up SUB in Python, connected
/// before the first large snapshot, heard nothing more). And a listener hands new connections the
/// mark of when it was bound. Rounding to powers of two bounds the rebinds to about a dozen in a
/// process's life (a state growing to 64 MiB). With a large state the mark is small, so a slow
/// subscriber loses messages early; each snapshot holds the whole state and every message
/// carries the version, so it resynchronises.
final class FeedPublisher {
    /// What libzmq holds per queued message besides its bytes: three `zmq_msg_t` (64 bytes each)
    /// in the pipe and an allocation header per frame longer than 33 bytes.
    static let messageOverhead = 256
    /// The size the first mark is worked out for (overhead included): messages up to it, the
    /// mutations and heartbeats of most apps, never lower the mark.
    static let smallMessageBytes = 512

    private let socket: ZMQSocket
    private let writer = HeaderWriter()
    private let queueBytes: Int
    private let maxHighWaterMark: Int
    private var prefixes: Set<[UInt8]> = []
    /// When something was last published (monotonic milliseconds).
    private(set) var lastPublished: UInt64 = 0
    /// The version of the last published snapshot.
    private(set) var lastSnapshotVersion: UInt64?
    /// The largest message published so far, frames' bytes plus ``messageOverhead`` (at least
    /// ``smallMessageBytes``, or the size expected at the start).
    private(set) var largestMessage: Int
    /// The high-water mark currently set on the socket, in messages per subscriber.
    private(set) var highWaterMark: Int
    /// The endpoint as bound (its port resolved), bound again when the mark goes down; set once
    /// the socket is bound. `nil`: the mark is lowered on the socket alone.
    var boundEndpoint: String?
    /// How many times the endpoint was unbound to be bound again for a lower mark.
    private(set) var rebinds = 0
    /// Since when (monotonic milliseconds) the endpoint waits to be bound again: libzmq closes
    /// the old listener on its I/O thread, so its port may be taken for a moment. `nil`: bound.
    private(set) var unboundSince: UInt64?
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
    /// messages of the smallest size, or of `expectedMessageBytes`: the state's size where it is
    /// known, so that a restarted authority need not bind again for it); call before the socket
    /// binds. `projections`: the names of the reactor's projections, each published on its own topic.
    init(socket: ZMQSocket, queueBytes: Int, maxHighWaterMark: Int, expectedMessageBytes: Int = 0, projections: [String] = []) throws(ZMQError) {
        self.socket = socket
        projectionTopics = projections.map { ($0, FeedMessage.Topic.projection($0)) }
        self.queueBytes = max(1, queueBytes)
        self.maxHighWaterMark = max(2, maxHighWaterMark)
        largestMessage = max(Self.smallMessageBytes, Self.messageOverhead + max(0, expectedMessageBytes))
        highWaterMark = Self.highWaterMark(queueBytes: self.queueBytes, messageBytes: largestMessage, cap: self.maxHighWaterMark)
        try socket.set(.sendHighWaterMark, highWaterMark)
    }

    /// The most messages of `messageBytes` each that fit `queueBytes`, rounded down to a power of
    /// two, within `2...cap` (`cap` itself when it fits, power of two or not).
    static func highWaterMark(queueBytes: Int, messageBytes: Int, cap: Int) -> Int {
        let fitting = queueBytes / max(1, messageBytes)
        guard fitting < cap else { return cap }
        return max(2, 1 << (Int.bitWidth - 1 - max(1, fitting).leadingZeroBitCount))
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

    /// Binds the endpoint again when it waits for that (``unboundSince``); call every turn until
    /// it is bound. Returns whether it is bound: `false` while the old listener still holds the port.
    @discardableResult
    func bindAgainIfNeeded() throws(ZMQError) -> Bool {
        guard unboundSince != nil, let boundEndpoint else { return true }
        do {
            try socket.bind(boundEndpoint)
        } catch where error.code == EADDRINUSE {
            return false
        }
        unboundSince = nil
        return true
    }

    /// Publishes one message, first lowering the high-water mark if it is the largest yet.
    ///
    /// - Returns: the bytes of its frames (what the socket was handed, whoever subscribed).
    @discardableResult
    func publish(_ message: FeedMessage, now: UInt64) throws(ZMQError) -> Int {
        let frames = message.frames(writer)
        let bytes = frames.reduce(0) { $0 + $1.count }
        try makeRoom(for: bytes, now: now)
        _ = try socket.trySend(frames)
        lastPublished = now
        if case .snapshot(let version, _, _) = message { lastSnapshotVersion = version }
        return bytes
    }

    /// Publishes the snapshot of `version` whose payload is `state`, lent to libzmq as it is: a
    /// large state's snapshot leaves without a copy (copying 71 MB into a message of its own
    /// took the loop about 40 ms).
    ///
    /// - Returns: the bytes of its frames.
    @discardableResult
    func publishSnapshot(version: UInt64, actionSeq: UInt64, state: EncodedBytes, now: UInt64) throws(ZMQError) -> Int {
        let head = FeedMessage.snapshotHead(version: version, actionSeq: actionSeq, writer)
        let bytes = head.reduce(state.count) { $0 + $1.count }
        try makeRoom(for: bytes, now: now)
        _ = try state.withUnsafeBytes { (payload) throws(ZMQError) in try socket.trySend(head, lending: payload, keptAliveBy: state) }
        lastPublished = now
        lastSnapshotVersion = version
        return bytes
    }

    /// Lowers the high-water mark before a message of `bytes` when it is the largest yet.
    private func makeRoom(for bytes: Int, now: UInt64) throws(ZMQError) {
        let size = Self.messageOverhead + bytes
        if size > largestMessage {
            largestMessage = size
            let mark = Self.highWaterMark(queueBytes: queueBytes, messageBytes: size, cap: maxHighWaterMark)
            if mark < highWaterMark {
                try socket.set(.sendHighWaterMark, mark)
                highWaterMark = mark
                if let boundEndpoint, unboundSince == nil {
                    // New pipes, all with the new mark (see the type's comment).
                    try socket.unbind(boundEndpoint)
                    rebinds += 1
                    unboundSince = now
                    try bindAgainIfNeeded()
                }
            }
        }
    }
}
