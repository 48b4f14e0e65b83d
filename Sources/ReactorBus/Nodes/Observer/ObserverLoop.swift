import ReactorCore
import ReactorLog
import ReactorWire
import ZeroMQ

/// The thread body of an ``Observer``: the Clone pattern over a SUB and a DEALER.
///
/// Subscribes first, then fetches a snapshot on the actions socket, in chunks it asks for with
/// credit (a few requests ahead, one more per chunk received, as in the ZeroMQ Guide's file
/// transfer), so a state of any size arrives in messages of a bounded size. Then:
///
/// - with a ``MutationFollower`` it applies every feed mutation newer than the state it holds,
///   with the reactor's `reduce`, and delivers the state after each batch of them (spaced out when
///   copying a large state for the streams would take more than a tenth of the time); mutations
///   that arrive while a fetch runs wait for it. A gap in versions fetches again;
/// - without one it delivers only feed snapshots with a higher version than the one held.
///
/// Either way, heartbeats that show a version it does not hold, or a silent feed, fetch again.
/// With several authorities (``AuthorityEndpoints``, feed and actions endpoints in pairs) a silent
/// feed instead moves both sockets to the next pair, and the fetch there resynchronises.
final class ObserverLoop<State: Sendable>: NodeLoop {
    /// Feed messages handled per turn at most, so timers and answers stay responsive.
    static var receiveBatch: Int { 4_096 }
    /// Chunk requests outstanding at once while fetching a snapshot.
    static var fetchCredit: Int { 4 }
    /// The largest chunk asked for (a smaller ``ObserverConfiguration/maxMessageBytes`` asks less).
    static var maxChunkBytes: Int { 1 << 20 }
    /// Mutations kept while a fetch runs; past it they are dropped and the fetch starts again.
    static var maxPendingMutations: Int { 1_000_000 }

    private let configuration: ObserverConfiguration
    private let logger: Logger
    private let runtime: NodeRuntime
    private let hub: SnapshotHub<State>
    private let counters: NodeMetrics<ObserverMetrics>
    private let context: ZMQContext
    private var feed: ZMQSocket
    private var actions: ZMQSocket
    private var poller: NodePoller
    /// The feed endpoints and the actions endpoints, in pairs; the sockets follow the current pair.
    private var feedEndpoints: AuthorityEndpoints
    private var actionsEndpoints: AuthorityEndpoints
    /// The terms authorities answered with (see ``AuthorityTermWatch``).
    private var terms = AuthorityTermWatch()
    private let writer = HeaderWriter()
    private let requestTimeout: UInt64
    private let silenceTimeout: UInt64
    private let chunkBytes: UInt64
    private let follower: MutationFollower<State>?
    private let decodeState: @Sendable ([UInt8]) throws -> State
    /// The authority's `pong` showed a schema version this observer may read (with ``ObserverConfiguration/schema``).
    private var schemaVerified = false
    private var feedIndex = 0
    private var actionsIndex = 0

    /// The version delivered last; nil until the first fetch is answered.
    private var held: UInt64?
    /// With a follower: the state at ``held`` (nil while a fetch replaces it).
    private var state: State?
    private var stateActionSeq: UInt64 = 0
    /// With a follower: mutations newer than the state, waiting for a fetch to end.
    private var pending: [(version: UInt64, actionSeq: UInt64, payload: [UInt8])] = []
    /// Set when a fetched state was older than the one held (an authority that lost the tail of
    /// the history held, e.g. after a failover under async replication): its mutations are of
    /// another history, so none is applied on the state held; the first past ``held`` makes the
    /// observer fetch again, and the state it then gets replaces the one held.
    private var followsAnotherHistory = false
    /// The newest feed snapshot seen before the first fetch was answered.
    private var early: RawSnapshot?
    /// The fetch in progress.
    private var fetch: SnapshotFetch?
    /// Whether the authority answers `snapshot_chunk` (false after an `unknown_kind` for it).
    private var chunked = true
    private var nextRequestID: UInt64 = 1
    /// Consecutive heartbeats that showed a newer version than the one held.
    private var behindHeartbeats = 0
    private var lastFeedMessage: UInt64
    private var lastMutation: UInt64?

    init(configuration: ObserverConfiguration, logger: Logger, context: ZMQContext, runtime: NodeRuntime, poller: NodePoller,
         hub: SnapshotHub<State>, counters: NodeMetrics<ObserverMetrics>, follower: MutationFollower<State>?,
         decodeState: @escaping @Sendable ([UInt8]) throws -> State) throws(ZMQError) {
        self.configuration = configuration
        self.logger = logger
        self.runtime = runtime
        self.poller = poller
        self.hub = hub
        self.counters = counters
        self.follower = follower
        self.decodeState = decodeState
        requestTimeout = max(1, configuration.requestTimeout.wholeMilliseconds)
        silenceTimeout = max(1, configuration.silenceTimeout.wholeMilliseconds)
        chunkBytes = UInt64(max(1_024, min(configuration.maxMessageBytes, Self.maxChunkBytes)))
        lastFeedMessage = MonotonicClock.milliseconds()
        self.context = context
        let problem = AuthorityEndpoints.problem(in: configuration.feedEndpoint, setting: "feedEndpoint")
            ?? AuthorityEndpoints.problem(in: configuration.actionsEndpoint, setting: "actionsEndpoint")
        feedEndpoints = AuthorityEndpoints(configuration.feedEndpoint)
        actionsEndpoints = AuthorityEndpoints(configuration.actionsEndpoint)
        if let problem = problem ?? Self.pairing(feedEndpoints, actionsEndpoints) {
            logger.error("\(problem)")
            throw ZMQError(code: ZMQError.Code.invalidArgument, function: "zmq_connect", endpoint: configuration.feedEndpoint)
        }
        (feed, actions) = try Self.connect(feed: feedEndpoints.current, actions: actionsEndpoints.current, configuration: configuration,
                                           following: follower != nil, context: context)
        do {
            try register()
        } catch {
            feed.close()
            actions.close()
            throw error
        }
    }

    /// Why the lists of feed and actions endpoints do not pair up, or `nil` when they do.
    private static func pairing(_ feed: AuthorityEndpoints, _ actions: AuthorityEndpoints) -> String? {
        guard feed.all.count != actions.all.count else { return nil }
        return "feedEndpoint lists \(feed.all.count) endpoint(s) and actionsEndpoint \(actions.all.count): give one actions endpoint per feed endpoint, in the same order"
    }

    /// A SUB subscribed to the topics followed and a DEALER, connected to one authority's feed and actions endpoints.
    private static func connect(feed feedEndpoint: String, actions actionsEndpoint: String, configuration: ObserverConfiguration,
                                following: Bool, context: ZMQContext) throws(ZMQError) -> (ZMQSocket, ZMQSocket) {
        let feed = try ZMQSocket(context: context, type: .sub)
        let actions: ZMQSocket
        do {
            actions = try ZMQSocket(context: context, type: .dealer)
        } catch {
            feed.close()
            throw error
        }
        do {
            try feed.set(.linger, 0)
            try feed.set(.receiveHighWaterMark, min(max(1, configuration.receiveHighWaterMark), Int(Int32.max)))
            // Feed messages are not limited: the authority sends states of any size, and an
            // observer that follows mutations does not subscribe to snapshots at all.
            try feed.set(.maxMessageSize, Int64(-1))
            // Subscribe before anything else (Clone pattern): whatever is published after the
            // fetched snapshot reaches us.
            if !following { try feed.set(.subscribe, FeedMessage.Topic.snapshot) }
            try feed.set(.subscribe, FeedMessage.Topic.heartbeat)
            if configuration.followMutations || following { try feed.set(.subscribe, FeedMessage.Topic.mutation) }
            try configuration.security?.apply(to: feed)
            try feed.connect(feedEndpoint)
            try actions.set(.linger, 0)
            try actions.set(.maxMessageSize, Int64(configuration.maxMessageBytes) + 4_096)
            try configuration.security?.apply(to: actions)
            try actions.connect(actionsEndpoint)
        } catch {
            feed.close()
            actions.close()
            throw error
        }
        return (feed, actions)
    }

    /// Registers both sockets with the poller.
    private func register() throws(ZMQError) {
        feedIndex = try poller.register(feed)
        actionsIndex = try poller.register(actions)
    }

    /// Runs until the thread is asked to stop or ZeroMQ fails; then closes the sockets and ends the streams.
    func run() {
        logger.debug("following \(feedEndpoints.current), fetching from \(actionsEndpoints.current)")
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
        if hasUndelivered { next = min(next, deliveryDue / 1_000_000 + 1) }
        return next
    }

    // MARK: Fetching

    /// Starts a fetch of the current state (dropping one in progress).
    private func requestSnapshot() throws(ZMQError) {
        if configuration.schema != nil, !schemaVerified {
            // Its pong leaves the authority before any later reply: checked before a snapshot.
            try send(.ping(requestID: takeRequestID()))
        }
        fetch = SnapshotFetch(deadline: MonotonicClock.milliseconds() + requestTimeout)
        if chunked {
            try sendChunkRequest(version: nil, offset: 0)
        } else {
            let id = takeRequestID()
            fetch?.wholeRequest = id
            try send(.snapshot(requestID: id))
        }
    }

    private func takeRequestID() -> UInt64 {
        defer { nextRequestID += 1 }
        return nextRequestID
    }

    private func sendChunkRequest(version: UInt64?, offset: UInt64) throws(ZMQError) {
        let id = takeRequestID()
        fetch?.outstanding[id] = offset
        try send(.snapshotChunk(requestID: id, version: version, offset: offset, maxBytes: chunkBytes))
    }

    private func send(_ message: ClientMessage) throws(ZMQError) {
        if try !actions.trySend(message.frames(writer)) {
            logger.debug("a snapshot request could not be queued; it is asked again after the timeout")
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
            logger.warning("no snapshot from \(actionsEndpoints.current) within \(configuration.requestTimeout); asking again")
            try requestSnapshot()
        }
        if now >= lastFeedMessage + silenceTimeout {
            lastFeedMessage = now
            if feedEndpoints.isList {
                try failOver(because: "its feed has been silent for \(configuration.silenceTimeout)")
            } else {
                try refetch("the feed has been silent for \(configuration.silenceTimeout)")
            }
        }
        if hasUndelivered { deliverWhenDue() }
    }

    /// Leaves the current authority for the next pair of endpoints: new sockets (what the old
    /// ones held is dropped), then a fetch there. The state held stays until a newer one comes:
    /// versions never go back.
    private func failOver(because reason: String) throws(ZMQError) {
        let lost = feedEndpoints.current
        feedEndpoints.advance()
        actionsEndpoints.advance()
        counters.update {
            $0.failovers += 1
            $0.refetches += 1
        }
        logger.info("authority \(lost) lost (\(reason)); trying \(feedEndpoints.current) (actions \(actionsEndpoints.current))")
        feed.close()
        actions.close()
        (feed, actions) = try Self.connect(feed: feedEndpoints.current, actions: actionsEndpoints.current, configuration: configuration,
                                           following: follower != nil, context: context)
        poller = poller.renewed()
        try register()
        // Another authority: its app's schema is checked again, and it may speak chunks or not.
        schemaVerified = false
        chunked = true
        behindHeartbeats = 0
        pending = []
        lastFeedMessage = MonotonicClock.milliseconds()
        try requestSnapshot()
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
            case .pong(_, _, _, let app, let schema, let compatible, _):
                if case .older(let term, let highest) = terms.check(AuthorityTermWatch.term(of: reply)) {
                    logger.warning("the authority at \(actionsEndpoints.current) answers from term \(term), older than term \(highest) seen before")
                    if feedEndpoints.isList {
                        try failOver(because: "term \(term) is older than \(highest)")
                        return
                    }
                }
                guard let own = configuration.schema, !schemaVerified else { break }
                guard own.agrees(withAuthority: schema, accepting: compatible) else {
                    refuse(own.disagreement(app: app, endpoint: actionsEndpoints.current, authority: schema))
                    return
                }
                schemaVerified = true
            case .snapshot(let id, let version, let actionSeq, let app, let payload):
                guard checkApp(app) else { return }
                // A reply overtaking its pong (it cannot, from this protocol's authority) waits for the next fetch.
                guard fetch?.wholeRequest == id, schemaChecked else {
                    counters.update { $0.staleIgnored += 1 }
                    continue
                }
                fetched((version, actionSeq, payload))
            case .snapshotChunk(let id, let version, let actionSeq, let app, let total, let offset, let payload):
                guard checkApp(app) else { return }
                guard schemaChecked else { continue }
                try receiveChunk(id: id, version: version, actionSeq: actionSeq, total: total, offset: offset, payload: payload)
            case .error(let ref, .unknownKind, _) where chunked && (fetch?.outstanding[ref] != nil || (ref == 0 && fetch?.version == nil && fetch?.wholeRequest == nil)):
                // (ref 0: a peer that does not name the request; only the first chunk is outstanding.)
                logger.info("the authority does not know snapshot_chunk (an older version): fetching whole snapshots")
                chunked = false
                try requestSnapshot()
            case .error(let ref, .expired, let message) where fetch?.outstanding[ref] != nil:
                logger.info("the authority dropped the version being fetched (\(message)); fetching the current one")
                try requestSnapshot()
            case .error(let ref, let code, let message):
                logger.warning("the authority refused snapshot request \(ref) (\(code.rawValue)): \(message); asking again after the timeout")
            case .ack, .acks, .stats, .features:
                break
            }
        }
    }

    /// Whether `app` is the one expected; else the observer stops with `wrong_app`.
    private func checkApp(_ app: String) -> Bool {
        guard let expected = configuration.appName, app != expected else { return true }
        refuse("the authority at \(actionsEndpoints.current) serves app '\(app)', not '\(expected)'")
        return false
    }

    /// Whether the authority's schema version is known to be one this observer reads (or none is configured).
    private var schemaChecked: Bool { configuration.schema == nil || schemaVerified }

    /// One chunk of the fetch in progress: appended in order, then more asked for with the
    /// credit it frees; the last one ends the fetch.
    private func receiveChunk(id: UInt64, version: UInt64, actionSeq: UInt64, total: UInt64, offset: UInt64, payload: [UInt8]) throws(ZMQError) {
        guard var current = fetch, current.outstanding.removeValue(forKey: id) == offset else {
            counters.update { $0.staleIgnored += 1 }
            return
        }
        // `current` must hold the only reference to the bytes so far, or appending the chunk
        // copies them all: 64 chunks of a 64 MiB state copied 2 GiB. Every path puts it back.
        fetch = nil
        if current.version == nil {
            current.version = version
            current.actionSeq = actionSeq
            current.total = total
            current.assembled.reserveCapacity(Int(clamping: total))
        }
        guard current.version == version, current.total == total, offset == UInt64(current.assembled.count),
              UInt64(current.assembled.count + payload.count) <= total, !payload.isEmpty || total == offset else {
            counters.update { $0.malformed += 1 }
            logger.warning("a snapshot chunk does not continue the state fetched so far; fetching again")
            fetch = current
            try requestSnapshot()
            return
        }
        current.assembled += payload
        current.deadline = MonotonicClock.milliseconds() + requestTimeout
        fetch = current
        if UInt64(current.assembled.count) == total {
            fetched((version, actionSeq, current.assembled))
            return
        }
        // Keep `fetchCredit` requests ahead of what has arrived.
        while let next = fetch?.nextOffset(chunkBytes: chunkBytes), fetch?.outstanding.count ?? Self.fetchCredit < Self.fetchCredit {
            try sendChunkRequest(version: version, offset: next)
        }
    }

    /// A whole state arrived: deliver it (and what waited for it).
    private func fetched(_ snapshot: RawSnapshot) {
        fetch = nil
        counters.update { $0.snapshotsReceived += 1 }
        behindHeartbeats = 0
        if let follower {
            adopt(snapshot, follower)
            return
        }
        if held == nil {
            apply(snapshot)
            if let early {
                if early.version > snapshot.version { apply(early) } else { counters.update { $0.staleIgnored += 1 } }
            }
            early = nil
        } else {
            offer(snapshot)
        }
    }

    // MARK: Following mutations

    /// Takes a fetched state as the base, then applies the mutations that waited for it.
    private func adopt(_ snapshot: RawSnapshot, _ follower: MutationFollower<State>) {
        if let held, snapshot.version < held, state != nil {
            counters.update { $0.staleIgnored += 1 }
            // Versions never go back, and the mutations that waited, or come, follow this
            // authority's history, not the held state's: follow none until a newer state.
            followsAnotherHistory = true
            pending = []
            logger.warning("the authority's state (version \(snapshot.version)) is older than the one held (\(held)): it lost what came after; its mutations are followed again from a state of it newer than \(held)")
            return
        }
        followsAnotherHistory = false
        do {
            state = try decodeState(snapshot.payload)
        } catch {
            counters.update { $0.malformed += 1 }
            logger.warning("the fetched state does not decode: \(error); fetching again after the timeout")
            return
        }
        held = snapshot.version
        stateActionSeq = snapshot.actionSeq
        let waiting = pending
        pending = []
        var gap = false
        for mutation in waiting where mutation.version > snapshot.version {
            if gap || !applyMutation(mutation, follower) {
                gap = true
            }
        }
        deliverState()
        if gap { try? refetch("mutation versions jump after the fetched version \(snapshot.version)") }
    }

    /// Applies one mutation on top of the held state; false on a version gap or a mutation that
    /// does not decode (the caller fetches again).
    private func applyMutation(_ mutation: (version: UInt64, actionSeq: UInt64, payload: [UInt8]), _ follower: MutationFollower<State>) -> Bool {
        guard let version = held, state != nil, mutation.version == version + 1 else { return false }
        do {
            let started = measureNextApply ? MonotonicClock.nanoseconds() : 0
            try follower.apply(&state!, mutation.payload)
            if measureNextApply {
                // The first change after a delivery copies the state the streams now share.
                copyNanoseconds = MonotonicClock.nanoseconds() - started
                measureNextApply = false
            }
        } catch {
            counters.update { $0.malformed += 1 }
            logger.warning("mutation \(mutation.version) does not decode: \(error)")
            state = nil
            return false
        }
        held = mutation.version
        stateActionSeq = mutation.actionSeq
        return true
    }

    /// Gives the held state to the streams, if it is newer than what they have.
    private var deliveredVersion: UInt64?
    private func deliverState() {
        guard let held, let state, deliveredVersion.map({ held > $0 }) ?? true else { return }
        deliveredVersion = held
        counters.update { $0.snapshotsDelivered += 1 }
        hub.publish(Snapshot(version: held, state: state), actionSeq: stateActionSeq)
        lastDelivery = MonotonicClock.nanoseconds()
        measureNextApply = true
    }

    // A delivered state is shared with the streams (and the hub keeps the newest for new
    // subscribers), so the next mutation copies it whole: nothing for a small state, a whole
    // dictionary of a million entries for a 64 MiB one. Deliveries are spaced so that copying
    // takes at most ``deliveryShare`` of the time: after a copy that took `t`, the next delivery
    // waits `t × (1 − share) / share`. A small state still goes out after every batch; every
    // delivered state is exact at its version, and the newest is always delivered in the end.

    /// The most of the loop's time that copying delivered states may take.
    static var deliveryShare: Double { 0.1 }
    private var lastDelivery: UInt64 = 0
    private var copyNanoseconds: UInt64 = 0
    private var measureNextApply = false

    /// When the next delivery may go out (monotonic nanoseconds).
    private var deliveryDue: UInt64 {
        lastDelivery + UInt64(Double(copyNanoseconds) * (1 - Self.deliveryShare) / Self.deliveryShare)
    }

    /// Whether the held state is newer than the delivered one (following mutations, no fetch under way).
    private var hasUndelivered: Bool {
        guard follower != nil, fetch == nil, let held, state != nil else { return false }
        return deliveredVersion.map { held > $0 } ?? true
    }

    private func deliverWhenDue() {
        if MonotonicClock.nanoseconds() >= deliveryDue { deliverState() }
    }

    private func follow(_ mutation: (version: UInt64, actionSeq: UInt64, payload: [UInt8]), _ follower: MutationFollower<State>) throws(ZMQError) {
        if fetch != nil || state == nil {
            if pending.count >= Self.maxPendingMutations {
                pending = []
                fetch = nil
                state = nil
                try refetch("more than \(Self.maxPendingMutations) mutations arrived during a fetch")
                return
            }
            pending.append(mutation)
            return
        }
        guard let version = held, mutation.version > version else { return }
        if followsAnotherHistory {
            try refetch("the authority's versions pass the \(version) held again")
            return
        }
        if !applyMutation(mutation, follower) {
            pending = [mutation]
            state = nil
            try refetch("mutation versions jump from \(version) to \(mutation.version)")
        }
    }

    // MARK: Feed

    private func receiveFeed(_ batch: ReceiveBatch) throws(ZMQError) {
        var batch = batch
        var received = false
        while let frames = try batch.next() {
            received = true
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
        if received, follower != nil, fetch == nil { deliverWhenDue() }
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
        case .mutation(let version, let actionSeq, _, let payload):
            counters.update { $0.mutations += 1 }
            if let follower {
                try follow((version, actionSeq, payload), follower)
                return
            }
            guard configuration.followMutations else { return }
            let previous = max(lastMutation ?? 0, held ?? 0)
            if version <= previous { return }
            lastMutation = version
            if held != nil, version != previous + 1 {
                try refetch("mutation versions jump from \(previous) to \(version)")
            }
        case .projection, .job:
            // Followed by ProjectionObserver and the inspector; this loop never subscribes to
            // projection or job topics.
            break
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
