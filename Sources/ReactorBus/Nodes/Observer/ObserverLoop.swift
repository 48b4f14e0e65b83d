import ReactorCore
import ReactorLog
import ReactorWire
import Synchronization
import ZeroMQ

/// A snapshot as the wire carries it.
typealias RawSnapshot = (version: UInt64, actionSeq: UInt64, payload: [UInt8])

/// The streams of an ``Observer`` and the snapshot they were last given.
///
/// The loop publishes under the lock only to swap in the new current snapshot and copy the
/// subscriber lists; it yields outside the lock. A new subscriber gets the current snapshot
/// under the lock, so it never sees a version twice or an older one after a newer one.
final class SnapshotHub<State: Sendable>: Sendable {
    private struct Current {
        var version: UInt64
        var actionSeq: UInt64
        var payload: [UInt8]
        var decoded: Snapshot<State>?
    }

    private struct Subscribers {
        var typed: [Int: AsyncStream<Snapshot<State>>.Continuation] = [:]
        var raw: [Int: AsyncStream<RawSnapshot>.Continuation] = [:]
        var nextID = 0
        var current: Current?
        var finished = false
    }

    private let subscribers = Mutex(Subscribers())
    private let bufferSize: Int
    private let decode: @Sendable ([UInt8]) throws -> State
    private let counters: NodeMetrics<ObserverMetrics>

    init(bufferSize: Int, counters: NodeMetrics<ObserverMetrics>, decode: @escaping @Sendable ([UInt8]) throws -> State) {
        self.bufferSize = max(1, bufferSize)
        self.counters = counters
        self.decode = decode
    }

    /// A new stream that starts with the current snapshot, if there is one.
    func typedStream() -> AsyncStream<Snapshot<State>> {
        let (stream, continuation) = AsyncStream.makeStream(of: Snapshot<State>.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = subscribers.withLock { state -> Int? in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.typed[id] = continuation
            if var current = state.current {
                if current.decoded == nil {
                    current.decoded = try? Snapshot(version: current.version, state: decode(current.payload))
                    state.current = current
                }
                if let snapshot = current.decoded { continuation.yield(snapshot) }
            }
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.typed.removeValue(forKey: id) }
        }
        return stream
    }

    /// A new stream of raw snapshots that starts with the current one, if there is one.
    func rawStream() -> AsyncStream<RawSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(of: RawSnapshot.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = subscribers.withLock { state -> Int? in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.raw[id] = continuation
            if let current = state.current { continuation.yield((current.version, current.actionSeq, current.payload)) }
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.raw.removeValue(forKey: id) }
        }
        return stream
    }

    /// Makes `snapshot` the current one and gives it to every stream.
    func publish(_ snapshot: RawSnapshot) {
        let (typed, raw) = subscribers.withLock { state in
            state.current = Current(version: snapshot.version, actionSeq: snapshot.actionSeq, payload: snapshot.payload)
            return (Array(state.typed.values), Array(state.raw.values))
        }
        for continuation in raw { continuation.yield(snapshot) }
        guard !typed.isEmpty else { return }
        let decoded: Snapshot<State>
        do {
            decoded = Snapshot(version: snapshot.version, state: try decode(snapshot.payload))
        } catch {
            counters.update { $0.malformed += 1 }
            return
        }
        subscribers.withLock { state in
            if state.current?.version == snapshot.version { state.current?.decoded = decoded }
        }
        for continuation in typed { continuation.yield(decoded) }
    }

    /// Ends every stream; later streams end at once.
    func finish() {
        let (typed, raw) = subscribers.withLock { state in
            state.finished = true
            defer { state.typed.removeAll(); state.raw.removeAll() }
            return (Array(state.typed.values), Array(state.raw.values))
        }
        for continuation in typed { continuation.finish() }
        for continuation in raw { continuation.finish() }
    }
}

/// The thread body of an ``Observer``: the Clone pattern over a SUB and a DEALER.
///
/// Subscribes first, then fetches a snapshot on the actions socket; afterwards applies only feed
/// snapshots newer than the one held, and fetches again when heartbeats (or a mutation gap, or a
/// silent feed) show that it missed something.
final class ObserverLoop<State: Sendable>: NodeLoop {
    /// Feed messages handled per turn at most, so timers and answers stay responsive.
    static var receiveBatch: Int { 4_096 }

    private let configuration: ObserverConfiguration
    private let logger: Logger
    private let runtime: NodeRuntime
    private let hub: SnapshotHub<State>
    private let counters: NodeMetrics<ObserverMetrics>
    private let feed: ZMQSocket
    private let actions: ZMQSocket
    private let poller: NodePoller
    private let writer = HeaderWriter()
    private let requestTimeout: UInt64
    private let silenceTimeout: UInt64
    /// The authority's `pong` showed a schema version this observer may read (with ``ObserverConfiguration/schema``).
    private var schemaVerified = false
    private var feedIndex = 0
    private var actionsIndex = 0

    /// The version delivered last; nil until the first fetch is answered.
    private var held: UInt64?
    /// The newest feed snapshot seen before the first fetch was answered.
    private var early: RawSnapshot?
    /// The outstanding fetch: its request id and when it times out.
    private var fetch: (id: UInt64, deadline: UInt64)?
    private var nextRequestID: UInt64 = 1
    /// Consecutive heartbeats that showed a newer version than the one held.
    private var behindHeartbeats = 0
    private var lastFeedMessage: UInt64
    private var lastMutation: UInt64?

    init(configuration: ObserverConfiguration, logger: Logger, context: ZMQContext, runtime: NodeRuntime, poller: NodePoller,
         hub: SnapshotHub<State>, counters: NodeMetrics<ObserverMetrics>) throws(ZMQError) {
        self.configuration = configuration
        self.logger = logger
        self.runtime = runtime
        self.poller = poller
        self.hub = hub
        self.counters = counters
        requestTimeout = max(1, configuration.requestTimeout.wholeMilliseconds)
        silenceTimeout = max(1, configuration.silenceTimeout.wholeMilliseconds)
        lastFeedMessage = MonotonicClock.milliseconds()
        feed = try ZMQSocket(context: context, type: .sub)
        do {
            actions = try ZMQSocket(context: context, type: .dealer)
        } catch {
            feed.close()
            throw error
        }
        do {
            try feed.set(.linger, 0)
            try feed.set(.receiveHighWaterMark, min(max(1, configuration.receiveHighWaterMark), Int(Int32.max)))
            try feed.set(.maxMessageSize, Int64(configuration.maxMessageBytes) + 4_096)
            // Subscribe before anything else (Clone pattern): whatever is published after the
            // fetched snapshot reaches us.
            try feed.set(.subscribe, FeedMessage.Topic.snapshot)
            try feed.set(.subscribe, FeedMessage.Topic.heartbeat)
            if configuration.followMutations { try feed.set(.subscribe, FeedMessage.Topic.mutation) }
            try configuration.security?.apply(to: feed)
            try feed.connect(configuration.feedEndpoint)
            try actions.set(.linger, 0)
            try actions.set(.maxMessageSize, Int64(configuration.maxMessageBytes) + 4_096)
            try configuration.security?.apply(to: actions)
            try actions.connect(configuration.actionsEndpoint)
            feedIndex = try poller.register(feed)
            actionsIndex = try poller.register(actions)
        } catch {
            feed.close()
            actions.close()
            throw error
        }
    }

    /// Runs until the thread is asked to stop or ZeroMQ fails; then closes the sockets and ends the streams.
    func run() {
        logger.debug("following \(configuration.feedEndpoint), fetching from \(configuration.actionsEndpoint)")
        do throws(ZMQError) {
            try requestSnapshot()
            while !runtime.isStopping {
                try poller.wait(until: nextDeadline())
                try receiveFeed(poller.receive(feed, at: feedIndex, batch: Self.receiveBatch))
                try receiveAnswers(poller.receive(actions, at: actionsIndex, batch: Self.receiveBatch))
                try checkTimers()
            }
        } catch {
            logger.error("observer stopped: \(error)")
        }
        feed.close()
        actions.close()
        hub.finish()
    }

    /// When the loop must next look at its timers (the poller waits at most 1 s anyway).
    private func nextDeadline() -> UInt64 {
        var next = lastFeedMessage + silenceTimeout
        if let fetch { next = min(next, fetch.deadline) }
        return next
    }

    // MARK: Fetching

    private func requestSnapshot() throws(ZMQError) {
        if configuration.schema != nil, !schemaVerified {
            // Its pong leaves the authority before any later reply: checked before a snapshot.
            _ = try actions.trySend(ClientMessage.ping(requestID: nextRequestID).frames(writer))
            nextRequestID += 1
        }
        let id = nextRequestID
        nextRequestID += 1
        fetch = (id, MonotonicClock.milliseconds() + requestTimeout)
        if try !actions.trySend(ClientMessage.snapshot(requestID: id).frames(writer)) {
            logger.debug("snapshot request \(id) could not be queued; it is asked again after the timeout")
        }
    }

    private func refetch(_ reason: @autoclosure () -> String) throws(ZMQError) {
        guard fetch == nil else { return }
        counters.update { $0.refetches += 1 }
        logger.info("fetching the snapshot again: \(reason())")
        try requestSnapshot()
    }

    private func checkTimers() throws(ZMQError) {
        let now = MonotonicClock.milliseconds()
        if let fetch, fetch.deadline <= now {
            counters.update { $0.fetchTimeouts += 1 }
            logger.warning("no snapshot from \(configuration.actionsEndpoint) within \(configuration.requestTimeout); asking again")
            try requestSnapshot()
        }
        if now >= lastFeedMessage + silenceTimeout {
            lastFeedMessage = now
            try refetch("the feed has been silent for \(configuration.silenceTimeout)")
        }
    }

    /// Stops the observer with a `wrong_app` failure saying `message`.
    private func refuse(_ message: String) {
        let refusal = ProtocolError(.wrongApp, message)
        logger.error("\(refusal.message); the observer stops")
        runtime.failure.record(refusal)
        _ = runtime.stop()
    }

    private func receiveAnswers(_ batch: ReceiveBatch) throws(ZMQError) {
        var batch = batch
        while let frames = try batch.next() {
            let reply: AuthorityReply
            do {
                reply = try AuthorityReply(frames: frames)
            } catch {
                counters.update { $0.malformed += 1 }
                logger.warning("dropped an answer that does not follow the protocol: \(error)")
                continue
            }
            switch reply {
            case .pong(_, _, _, let app, let schema, let compatible):
                guard let own = configuration.schema, !schemaVerified else { break }
                guard own.agrees(withAuthority: schema, accepting: compatible) else {
                    refuse(own.disagreement(app: app, endpoint: configuration.actionsEndpoint, authority: schema))
                    return
                }
                schemaVerified = true
            case .snapshot(let id, let version, let actionSeq, let app, let payload):
                if let expected = configuration.appName, app != expected {
                    refuse("the authority at \(configuration.actionsEndpoint) serves app '\(app)', not '\(expected)'")
                    return
                }
                // A reply overtaking its pong (it cannot, from this protocol's authority) waits for the next fetch.
                guard configuration.schema == nil || schemaVerified else { break }
                if fetch?.id == id { fetch = nil }
                counters.update { $0.snapshotsReceived += 1 }
                behindHeartbeats = 0
                if held == nil {
                    apply((version, actionSeq, payload))
                    if let early {
                        if early.version > version { apply(early) } else { counters.update { $0.staleIgnored += 1 } }
                    }
                    early = nil
                } else {
                    offer((version, actionSeq, payload))
                }
            case .error(let ref, let code, let message):
                logger.warning("the authority refused snapshot request \(ref) (\(code.rawValue)): \(message); asking again after the timeout")
            case .ack, .stats:
                break
            }
        }
    }

    // MARK: Feed

    private func receiveFeed(_ batch: ReceiveBatch) throws(ZMQError) {
        var batch = batch
        while let frames = try batch.next() {
            lastFeedMessage = MonotonicClock.milliseconds()
            let message: FeedMessage
            do {
                message = try FeedMessage(frames: frames)
            } catch {
                counters.update { $0.malformed += 1 }
                logger.debug("dropped a feed message that does not follow the protocol: \(error)")
                continue
            }
            try handle(message)
        }
    }

    private func handle(_ message: FeedMessage) throws(ZMQError) {
        switch message {
        case .snapshot(let version, let actionSeq, let payload):
            counters.update { $0.snapshotsReceived += 1 }
            if held == nil {
                // Held back until the fetched snapshot is delivered; only the newest is kept.
                if early.map({ version > $0.version }) ?? true {
                    if early != nil { counters.update { $0.staleIgnored += 1 } }
                    early = (version, actionSeq, payload)
                } else {
                    counters.update { $0.staleIgnored += 1 }
                }
            } else {
                offer((version, actionSeq, payload))
            }
        case .heartbeat(let version, _):
            counters.update { $0.heartbeats += 1 }
            guard let held, version > held else {
                behindHeartbeats = 0
                return
            }
            behindHeartbeats += 1
            if behindHeartbeats > 1 {
                try refetch("heartbeats show version \(version), newer than the \(held) held")
            }
        case .mutation(let version, _, _, _):
            counters.update { $0.mutations += 1 }
            guard configuration.followMutations else { return }
            let previous = max(lastMutation ?? 0, held ?? 0)
            if version <= previous { return }
            lastMutation = version
            if held != nil, version != previous + 1 {
                try refetch("mutation versions jump from \(previous) to \(version)")
            }
        }
    }

    /// Delivers a snapshot newer than the one held; counts an older or equal one.
    private func offer(_ snapshot: RawSnapshot) {
        if let held, snapshot.version <= held {
            counters.update { $0.staleIgnored += 1 }
            return
        }
        apply(snapshot)
    }

    private func apply(_ snapshot: RawSnapshot) {
        held = snapshot.version
        counters.update { $0.snapshotsDelivered += 1 }
        hub.publish(snapshot)
    }
}
