import MessagePack
import ReactorCore
import ReactorLog
import ReactorWire
import ZeroMQ

/// The authority's socket loop: owns the three sockets, the journal and the snapshot store on
/// the node's thread, and moves bytes between them and the ``AuthorityEngine``.
///
/// One turn: poll; read up to `maxBatch` messages from each ready socket into the engine; then
/// flush — take the engine's outbox, send its pongs and heartbeats, append its records to the
/// journal and commit them under the fsync policy, and only once they are durable send acks,
/// jobs, the batch's mutations and one snapshot. Under the default `batch` policy the commit is
/// a group commit: the `fdatasync` runs on another thread while the loop goes on, the outbox
/// waits in a ``CommitQueue``, and it leaves (in turn order) on the turn after the sync reports.
///
/// The turn goes one way: the loop tells the engine what it will need (``AuthorityEngine/Outbox/Demand``),
/// carries the outbox out, and hands what it saw (commits, refusals, snapshots) back as an
/// ``AuthorityLoopReport``; it never reads or changes the engine's internals.
final class AuthorityLoop<R: Reactor>: NodeLoop {
    private let engine: AuthorityEngine<R>
    /// Where states encoded off the loop for fetches and the feed come back (``StateEncode``).
    private let stateEncodes: Mailbox<StateEncode.Done>
    private let configuration: AuthorityConfiguration
    private let logger: Logger
    private let runtime: NodeRuntime
    private let poller: NodePoller
    private let metrics: NodeMetrics<AuthorityMetrics>
    private let actions: ZMQSocket
    private let workers: ZMQSocket
    private let feed: FeedPublisher
    private let feedSocket: ZMQSocket
    private var durability: AuthorityDurability<R>?
    /// Streams the journal to standbys (`--replication`); `nil` when none are served.
    private let replication: ReplicationServer<R>?
    private let zap: ZAPHandler?
    private let monitors: [(domain: String, socket: ZMQSocket)]
    private let heartbeatMilliseconds: UInt64
    private let idleFeedMilliseconds: UInt64
    private var nextHeartbeat: UInt64 = 0
    private var nextTick: UInt64 = 0
    private var trimmer = HeapTrimmer(interval: .seconds(2))
    private let replyBudget: ReplyBudget
    private let writer = HeaderWriter()
    /// Requests refused for their client's reply bytes since the last warning, and when that was.
    private var refusedSinceWarning = 0
    private var lastRefusalWarning: UInt64?
    /// What this loop saw since the last flush, for the engine to count.
    private var report = AuthorityLoopReport()
    /// Turns whose messages wait for their journal records to be durable, oldest first.
    private var held = CommitQueue<HeldTurn>()
    /// When the feed publishes its next snapshot.
    private var snapshotSchedule: FeedSnapshotSchedule
    /// The journal's LSN when the feed's snapshot being encoded off the loop was copied: its
    /// bytes are published once the journal (and a `sync` standby) has the records through it.
    private var feedEncodingLSN: UInt64?
    /// Whether the snapshot replica was asked for an encoding of the state yet (logged once).
    private var replicaEncodesState = false
    /// A feed snapshot encoded off the loop whose records are not durable yet, and their LSN.
    private var feedSnapshotWaiting: (snapshot: FeedSnapshot, lsn: UInt64)?
    /// Records of the outbox taken last that are not yet appended to the journal: nonzero only
    /// while a turn carries them there, or after it threw before they arrived (then the engine's
    /// state is ahead of the journal, and no final snapshot may be taken of it).
    private var unappendedRecords = 0

    /// An outbox waiting in ``held``, and whether the feed wanted its mutations when it was taken.
    private struct HeldTurn {
        var outbox: AuthorityEngine<R>.Outbox
        var mutations: Bool
        /// When its turn began (monotonic nanoseconds), from which its acks' wait is measured.
        var started: UInt64
    }
    /// The feed's rebinds for a lower mark already logged (``FeedPublisher/rebinds``).
    private var loggedRebinds = 0
    /// How many 5 s periods the feed has waited to be bound again, as last warned.
    private var lastBindWarning: UInt64 = 0
    /// TCP and IPC peers connected to the feed now (from its monitor).
    private var feedConnections: UInt64 = 0

    /// The endpoints as bound (with real ports where `*` or `0` was asked for).
    let endpoints: AuthorityNode<R>.Endpoints
    var ready: AuthorityNode<R>.Endpoints { endpoints }

    init(reactor: R, configuration: AuthorityConfiguration, logger: Logger, context: ZMQContext, runtime: NodeRuntime,
         poller: NodePoller, metrics: NodeMetrics<AuthorityMetrics>) throws {
        self.configuration = configuration
        self.logger = logger
        self.runtime = runtime
        self.poller = poller
        self.metrics = metrics
        self.heartbeatMilliseconds = max(1, configuration.heartbeatInterval.wholeMilliseconds)
        self.idleFeedMilliseconds = max(1, configuration.idleFeedInterval.wholeMilliseconds)
        replyBudget = ReplyBudget(limit: configuration.clientQueueBytes)
        snapshotSchedule = FeedSnapshotSchedule(policy: configuration.feedSnapshots)
        engine = AuthorityEngine(reactor: reactor, configuration: configuration, logger: logger, journaling: configuration.persistence != nil)
        engine.term = configuration.leadership?.term
        let stateEncodes = try Mailbox<StateEncode.Done>.forNode()
        self.stateEncodes = stateEncodes
        engine.startStateEncode = { StateEncode.start($0, reportingTo: stateEncodes) }
        if configuration.replication?.endpoint != nil, configuration.persistence == nil { throw ReplicationError.primaryNeedsDataDirectory }
        if let persistence = configuration.persistence {
            let durability = try AuthorityDurability<R>(configuration: persistence, app: configuration.appName, logger: logger)
            durability.replicaSetup = .init(reactor: reactor, configuration: configuration, logger: logger)
            try durability.recover(into: engine, schema: configuration.schema)
            self.durability = durability
            if configuration.replication?.endpoint != nil { durability.recent = RecentRecords() }
        } else {
            logger.notice("no --data directory: state is kept in memory only and lost when the authority stops")
        }
        // Transforms: a fresh state gets the reactor's initial mutations and actions, journaled.
        if engine.startIfFresh() { logger.info("fresh state: applied the app's initial mutations and actions") }
        actions = try ZMQSocket(context: context, type: .router)
        workers = try ZMQSocket(context: context, type: .router)
        feedSocket = try ZMQSocket(context: context, type: .xpub)
        let sockets = [("actions", actions), ("workers", workers), ("feed", feedSocket)]
        if let security = configuration.security {
            // The ZAP handler must be bound before any CURVE handshake can happen. It runs with
            // or without an allowlist: the replication socket admits only known keys.
            let allowlist = Allowlist(directory: security.allowKeysDirectory, authorityKey: security.publicKey)
            zap = try ZAPHandler(context: context, allowlist: allowlist, logger: logger)
            if let directory = security.allowKeysDirectory {
                logger.info("CURVE on; allowlist \(directory): \(allowlist.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")) key(s)")
            } else {
                logger.info("CURVE on; any client that knows the server key is admitted (no --allow-keys); standbys with this authority's key")
            }
            for (domain, socket) in sockets { try security.apply(to: socket, domain: domain) }
        } else {
            zap = nil
        }
        // One monitor per socket (libzmq allows no more): handshake failures with CURVE, and
        // the feed's connections and disconnections always (the observers gauge).
        let tag = UInt64.random(in: 0...UInt64.max)
        monitors = try sockets.compactMap { domain, socket throws(ZMQError) in
            var events: ZMQMonitorEvents = configuration.security == nil ? [] : .handshakeFailures
            if domain == "feed" { events.formUnion([.accepted, .disconnected]) }
            return events.isEmpty ? nil : (domain, try socket.monitor(events, name: "authority-\(domain)-\(tag)"))
        }
        for socket in [actions, workers] {
            // The engine refuses messages over --max-message-bytes with `too_large`, so that the
            // sender learns why; ZeroMQ itself only drops (and resets the connection of) messages
            // far beyond it, to bound the memory one message can take.
            try socket.set(.maxMessageSize, Self.transportLimit(configuration.maxMessageBytes))
            try socket.set(.receiveHighWaterMark, 100_000)
            try socket.set(.sendHighWaterMark, 100_000)
        }
        if let replicationConfiguration = configuration.replication, let endpoint = replicationConfiguration.endpoint {
            replication = try ReplicationServer(
                configuration: replicationConfiguration, endpoint: endpoint, app: configuration.appName, schema: configuration.schema.version,
                heartbeatMilliseconds: heartbeatMilliseconds, context: context, security: configuration.security, logger: logger)
        } else {
            replication = nil
        }
        feed = try FeedPublisher(socket: feedSocket, queueBytes: configuration.feedQueueBytes, maxHighWaterMark: configuration.feedHighWaterMark,
                                 expectedMessageBytes: engine.knownStateBytes,
                                 projections: engine.projectionNames)
        try feedSocket.set(.maxMessageSize, 4_096)
        try actions.bind(configuration.actionsEndpoint)
        try workers.bind(configuration.workersEndpoint)
        try feedSocket.bind(configuration.feedEndpoint)
        endpoints = AuthorityNode<R>.Endpoints(
            actions: try actions.get(.lastEndpoint),
            workers: try workers.get(.lastEndpoint),
            feed: try feedSocket.get(.lastEndpoint),
            replication: replication?.endpoint
        )
        feed.boundEndpoint = endpoints.feed
    }

    /// The size beyond which ZeroMQ drops an inbound message unanswered: 4 times the accepted
    /// size plus 16 MiB.
    static func transportLimit(_ maxMessageBytes: Int64) -> Int64 {
        maxMessageBytes.multipliedReportingOverflow(by: 4).overflow ? .max : max(maxMessageBytes, maxMessageBytes * 4 + (16 << 20))
    }

    /// Runs until the node thread is asked to stop; then flushes and closes everything.
    func run() {
        let now = MonotonicClock.milliseconds()
        let recovered = engine.dispatchUnreportedJobs(now: now)
        if recovered > 0 { logger.info("\(recovered) unfinished job(s) from before the restart will be dispatched again") }
        nextHeartbeat = now + heartbeatMilliseconds
        nextTick = now + 100
        do {
            let actionsIndex = try poller.register(actions)
            let workersIndex = try poller.register(workers)
            let feedIndex = try poller.register(feedSocket)
            let zapIndex = try zap.map { try poller.register($0.pollable) }
            let monitorIndices = try monitors.map { try poller.register($0.socket) }
            let syncIndex = durability.map { poller.register($0.syncOutcomes) }
            let stateEncodesIndex = poller.register(stateEncodes)
            let replicationIndex = try replication.map { try poller.register($0.socket) }
            logger.info("serving app \(configuration.appName): actions \(endpoints.actions), workers \(endpoints.workers), feed \(endpoints.feed)\(replication.map { ", replication \($0.endpoint) (\($0.mode.rawValue))" } ?? "")")
            while !runtime.isStopping {
                try poller.wait(until: min(nextTick, feed.lastPublished + idleFeedMilliseconds))
                if let zap, let zapIndex, poller.isReadable(zapIndex) { try zap.handleRequests(now: MonotonicClock.milliseconds()) }
                for (offset, index) in monitorIndices.enumerated() where poller.isReadable(index) { try readMonitor(monitors[offset]) }
                if let syncIndex, poller.isReadable(syncIndex) { try durable { try $0.collectSyncs(now: MonotonicClock.milliseconds()) } }
                if poller.isReadable(stateEncodesIndex) {
                    // The replies join this turn's outbox; the feed's snapshot leaves now, or
                    // once its records are durable.
                    let now = MonotonicClock.milliseconds()
                    for done in stateEncodes.drain() {
                        if case .failure(let error) = done.result { durability?.replicaEncodingFailed(error) }
                        if let snapshot = engine.finishStateEncode(done, now: now) { try encoded(snapshot, now: now) }
                    }
                }
                if let replication, let replicationIndex, let durability {
                    var batch = poller.receive(replication.socket, at: replicationIndex, batch: configuration.maxBatch)
                    let now = MonotonicClock.milliseconds()
                    while let frames = try batch.next() { try replication.handle(frames, durability: durability, now: now) }
                }
                try turn(actions: poller.receive(actions, at: actionsIndex, batch: configuration.maxBatch),
                         workers: poller.receive(workers, at: workersIndex, batch: configuration.maxBatch),
                         feedReady: poller.isReadable(feedIndex))
            }
            logger.info("stopping: finishing the batch in hand")
            try turn(actions: nil, workers: nil, feedReady: false)
            if !held.isEmpty {
                // What waits for the disk may leave once it is there: wait here, then send it.
                try durable { try $0.commitNow() }
                try carryOutDurable(now: MonotonicClock.milliseconds())
            }
        } catch let error as ZMQError where error.isTerminated {
            logger.info("context shut down: stopping")
        } catch {
            runtime.failure.record(error)
            logger.error("authority stopped: \(error)")
        }
        if let durability {
            durability.finishSnapshotInProgress()
            // Whether the last turn ended normally or threw midway, the final snapshot holds
            // nothing the journal lacks.
            let final = durability.wantsFinalSnapshot
                ? durability.finalCheckpoint(from: engine.takeOutbox(.init(checkpointAtRecords: 0)), unappended: unappendedRecords) : nil
            durability.close(final: final)
            report.merge(durability.takeReport())
        }
        if let replication {
            let streamed = replication.takeReport()
            report.replicationRecordsSent += streamed.records
            report.replicationBytesSent += streamed.bytes
            replication.close()
        }
        engine.absorb(report)
        // Monitoring stops before its readers close (a monitor event for a closed reader would
        // block libzmq's I/O thread, and every socket of the context with it).
        for socket in [actions, workers, feedSocket] { socket.stopMonitor() }
        for monitor in monitors { monitor.socket.close() }
        zap?.close()
        actions.close()
        workers.close()
        feedSocket.close()
        metrics.publish(engine.currentMetrics())
    }

    private func readMonitor(_ monitor: (domain: String, socket: ZMQSocket)) throws(ZMQError) {
        while let event = try monitor.socket.readMonitorEvent() {
            if event.event == .accepted {
                feedConnections += 1
                continue
            }
            if event.event == .disconnected {
                feedConnections = feedConnections > 0 ? feedConnections - 1 : 0
                continue
            }
            report.handshakesRefused += 1
            let why = event.event == .handshakeFailedAuth ? "not admitted by the allowlist"
                : event.event == .handshakeFailedProtocol ? "no CURVE or a broken handshake" : "wrong keys (handshake did not decrypt)"
            logger.warning("refused a peer on the \(monitor.domain) socket: \(why)")
        }
    }

    /// One turn over what the poller found: `actions` and `workers` are this turn's batches
    /// (`nil` for the last turn, after a stop).
    private func turn(actions: ReceiveBatch?, workers: ReceiveBatch?, feedReady: Bool) throws {
        let started = MonotonicClock.nanoseconds()
        let now = MonotonicClock.milliseconds()
        if feedReady { try feed.readSubscriptions() }
        try bindFeedAgainIfNeeded(now: now)
        // The subscriptions change only above: this turn's demand will ask for mutations
        // exactly when the engine gathers them.
        engine.followsMutations = feed.wantsMutations
        if var batch = actions {
            let flushEach = durability?.flushesEachAction == true
            while let frames = try batch.next() {
                report.actionsBytesReceived += Self.bytes(of: frames)
                engine.handleClient(frames, now: now)
                if flushEach { try flush(now: now, started: started) }
            }
        }
        if var batch = workers {
            while let frames = try batch.next() {
                report.workersBytesReceived += Self.bytes(of: frames)
                engine.handleWorker(frames, now: now)
            }
        }
        if now >= nextTick {
            let heartbeat = now >= nextHeartbeat
            if heartbeat { nextHeartbeat = now + heartbeatMilliseconds }
            engine.tick(now: now, sendHeartbeats: heartbeat)
            nextTick = now + 100
            trimmer.trimIfDue(now: now, largestMessage: feed.largestMessage)
            replyBudget.prune()
        }
        try flush(now: now, started: started)
        metrics.publish(engine.currentMetrics())
    }

    /// The bytes of a message's frames.
    private static func bytes(of frames: [[UInt8]]) -> UInt64 {
        UInt64(frames.reduce(0) { $0 + $1.count })
    }

    /// Journal first, then everything that may only leave once the journal has it (pongs and
    /// heartbeats leave at once). `started`: when the turn began (monotonic nanoseconds), from
    /// which the acks' wait is measured.
    private func flush(now: UInt64, started: UInt64) throws {
        var demand = AuthorityEngine<R>.Outbox.Demand(
            mutations: feed.wantsMutations,
            snapshot: feed.wantsSnapshots && snapshotSchedule.timeAllows(now: now),
            publishedVersion: snapshotSchedule.lastVersion,
            snapshotAtVersion: feed.wantsSnapshots ? snapshotSchedule.dueAtVersion : nil,
            checkpointAtRecords: durability?.checkpointDemand(now: now))
        demand.projections = feed.wantedProjections
        // Without a journal the turn's snapshot is published right after its acks: encoded then
        // (``carryOut(_:publishingState:now:encodingStateFor:)``), so the acks do not wait for it.
        // A snapshot replica encodes the state for the feed's snapshots of a large state, for
        // fetches and for whole replies: the loop neither encodes nor copies its state for them.
        engine.encodesElsewhere = durability?.replicaRuns == true
        var taken = demand
        if durability == nil {
            taken.snapshot = false
            taken.snapshotAtVersion = nil
        }
        let outbox = engine.takeOutbox(taken)
        unappendedRecords = outbox.records.count
        // Job events from the next turn on, while anyone follows them (an inspector).
        engine.followsJobs = feed.wantsJobs
        if outbox.state != nil {
            snapshotSchedule.took(version: outbox.version, costNanoseconds: outbox.stateEncodeNanoseconds, now: now)
        }
        if let encoding = outbox.stateEncoding {
            // Not asked for again meanwhile; the cost is counted when the bytes are back.
            snapshotSchedule.took(version: encoding.version, costNanoseconds: nil, now: now)
        }
        for frames in outbox.promptReplies {
            if try actions.trySend(frames) { report.actionsBytesSent += Self.bytes(of: frames) }
        }
        for frames in outbox.promptToWorkers {
            if try workers.trySend(frames) { report.workersBytesSent += Self.bytes(of: frames) }
        }
        // Moved into the turn, not copied (a copy retained each of its arrays, every turn).
        let turn = HeldTurn(outbox: consume outbox, mutations: demand.mutations, started: started)
        if let durability {
            var lsn = durability.lastLSN
            if !turn.outbox.records.isEmpty {
                // A journal that cannot be written ends the node before any ack of this batch
                // leaves; the batch's clients are told why instead of waiting for a timeout.
                do {
                    lsn = try durability.append(turn.outbox.records)
                    unappendedRecords = 0
                } catch {
                    refuseHeld(and: turn.outbox, because: error)
                    throw error
                }
            }
            if turn.outbox.stateEncoding != nil { feedEncodingLSN = lsn }
            if let version = turn.outbox.encodeElsewhere {
                let mailbox = stateEncodes
                let asked = durability.encodeState(lsn: lsn, version: version, actionSeq: turn.outbox.actionSeq) { mailbox.post($0) }
                if !asked {
                    engine.abandonStateEncoding(version: version)
                } else if !replicaEncodesState {
                    replicaEncodesState = true
                    logger.info("the state (\(engine.knownStateBytes) bytes) is encoded by the snapshot replica for the feed, fetches and whole snapshot replies")
                }
            }
            durability.snapshot(turn.outbox.checkpoint, coveringThrough: lsn, at: (turn.outbox.version, turn.outbox.actionSeq), now: now)
            held.hold(turn, until: lsn)
            if let replication {
                try replication.pump(durability: durability, now: now)
                let streamed = replication.takeReport()
                report.replicationRecordsSent += streamed.records
                report.replicationBytesSent += streamed.bytes
                report.standbys = UInt64(replication.standbys)
                report.replicationLag = replication.lag(lastLSN: durability.lastLSN)
            }
            try carryOutDurable(now: now)
            report.merge(durability.takeReport())
        } else {
            try carryOut(turn, publishingState: true, now: now, encodingStateFor: demand)
        }
        engine.absorb(report.take())
    }

    /// Sends, in turn order, every held turn whose records are durable now. Of several feed
    /// snapshots released together only the newest is published: it supersedes the others.
    private func carryOutDurable(now: UInt64) throws {
        guard let durable = durableLSN else { return }
        let released = held.release(durableThrough: durable)
        let newestState = released.lastIndex { $0.outbox.state != nil }
        for (index, turn) in released.enumerated() {
            try carryOut(turn, publishingState: index == newestState, now: now)
        }
        try publishWaitingSnapshot(durableThrough: durable, now: now)
    }

    /// The journal's records are durable through this LSN (`nil` without a journal). Sync
    /// replication: a record is durable once the local journal and a standby have it.
    private var durableLSN: UInt64? {
        guard let durability else { return nil }
        return replication?.mode == .sync ? min(durability.durableLSN, replication?.syncDurable ?? 0) : durability.durableLSN
    }

    /// A feed snapshot encoded off the loop is back: published now, or (with a journal) once the
    /// records through the version it is of are durable, after the mutations up to it.
    private func encoded(_ snapshot: FeedSnapshot, now: UInt64) throws {
        snapshotSchedule.took(version: snapshot.version, costNanoseconds: snapshot.encodeNanoseconds, now: now)
        guard let durable = durableLSN else {
            try publishSnapshot(snapshot.bytes, version: snapshot.version, actionSeq: snapshot.actionSeq, now: now)
            return
        }
        feedSnapshotWaiting = (snapshot, feedEncodingLSN ?? 0)
        feedEncodingLSN = nil
        try publishWaitingSnapshot(durableThrough: durable, now: now)
    }

    private func publishWaitingSnapshot(durableThrough durable: UInt64, now: UInt64) throws {
        guard let waiting = feedSnapshotWaiting, waiting.lsn <= durable else { return }
        feedSnapshotWaiting = nil
        try fence()
        try publishSnapshot(waiting.snapshot.bytes, version: waiting.snapshot.version, actionSeq: waiting.snapshot.actionSeq, now: now)
    }

    /// Acks, jobs and feed messages of one turn whose records are durable. `stateDemand`: the
    /// turn's outbox was taken without its snapshot, which is encoded once the acks and jobs
    /// have left (the engine's state is still the turn's).
    private func carryOut(_ turn: HeldTurn, publishingState: Bool, now: UInt64, encodingStateFor stateDemand: AuthorityEngine<R>.Outbox.Demand? = nil) throws {
        try fence()
        try sendReplies(turn.outbox, now: now)
        if turn.outbox.acks > 0 {
            report.acks += UInt64(turn.outbox.acks)
            report.ackLatency.observe(Double(MonotonicClock.nanoseconds() &- turn.started) / 1e9, times: UInt64(turn.outbox.acks))
        }
        for frames in turn.outbox.toWorkers {
            if try workers.trySend(frames) { report.workersBytesSent += Self.bytes(of: frames) }
        }
        var state = publishingState ? turn.outbox.state : nil
        if let stateDemand {
            switch engine.feedState(stateDemand) {
            case .encoded(let bytes, let nanoseconds):
                snapshotSchedule.took(version: turn.outbox.version, costNanoseconds: nanoseconds, now: now)
                state = bytes
            case .encoding(let encoding):
                snapshotSchedule.took(version: encoding.version, costNanoseconds: nil, now: now)
            case nil:
                break
            }
        }
        try publish(turn.outbox, mutations: turn.mutations, state: state, now: now)
    }

    /// Runs `body` on the durability; if the journal failed, every held ack is refused first.
    private func durable(_ body: (AuthorityDurability<R>) throws -> Void) throws {
        guard let durability else { return }
        do {
            try body(durability)
        } catch {
            refuseHeld(and: nil, because: error)
            throw error
        }
    }

    /// The journal failed: held acks (and `outbox`'s) become `unavailable` errors, so their
    /// clients learn why instead of waiting for a timeout; nothing else of theirs leaves.
    private func refuseHeld(and outbox: AuthorityEngine<R>.Outbox?, because error: any Error) {
        for turn in held.removeAll() {
            for reply in turn.outbox.replies {
                for message in Self.refusingAcks(reply, because: error, writer: writer) { _ = try? actions.trySend(message) }
            }
        }
        for reply in outbox?.replies ?? [] {
            for message in Self.refusingAcks(reply, because: error, writer: writer) { _ = try? actions.trySend(message) }
        }
    }

    /// Sends the batch's replies. A reply to a `snapshot` or `stats` request is charged to its
    /// client's ``ReplyBudget`` until libzmq lets go of it; one that would take the client over
    /// `--client-queue-bytes` is replaced by a `busy` error for the same request.
    private func sendReplies(_ outbox: AuthorityEngine<R>.Outbox, now: UInt64) throws(ZMQError) {
        for (index, reply) in outbox.replies.enumerated() {
            let frames: [[UInt8]]
            switch reply {
            case .ack(let routingID, let clientSeq, let actionSeq, let version):
                // Packed where it is sent: no arrays for the ack's frames.
                let header = AuthorityReply.ack(clientSeq: clientSeq, actionSeq: actionSeq, version: version).packedHeader(writer)
                if try actions.trySend(routingID, last: header) { report.actionsBytesSent += UInt64(routingID.count + header.count) }
                continue
            case .acks:
                frames = reply.frames(writer)
                report.ackBatches += 1
            case .frames(let queued):
                frames = queued
            case .lending(let head, let last, let range):
                try sendLending(head, last: last, range: range, answering: outbox.requestReplies[index], now: now)
                continue
            }
            guard let request = outbox.requestReplies[index], let client = frames.first else {
                if try actions.trySend(frames) { report.actionsBytesSent += Self.bytes(of: frames) }
                continue
            }
            let cost = ReplyBudget.cost(of: frames)
            if let account = replyBudget.charge(client: client, bytes: cost) {
                if try actions.trySend(frames, onRelease: { account.release(cost) }) { report.actionsBytesSent += Self.bytes(of: frames) }
            } else {
                let refusal = refusal(of: request, frames: frames, cost: cost, now: now)
                if try actions.trySend(refusal) { report.actionsBytesSent += Self.bytes(of: refusal) }
            }
        }
    }

    /// Fencing: an elected authority sends nothing once it cannot be sure it is the primary.
    private func fence() throws(LeadershipLost) {
        if let leadership = configuration.leadership, !leadership.mayAct { throw LeadershipLost(term: leadership.term) }
    }

    /// Sends a reply whose last frame, `range` of `last`, is lent to libzmq (a whole state, a
    /// chunk of one), charged to its client's ``ReplyBudget`` as any reply to a request until
    /// libzmq lets go of it.
    private func sendLending(_ head: [[UInt8]], last: EncodedBytes, range: Range<Int>, answering request: AuthorityEngine<R>.Outbox.RequestReply?,
                             now: UInt64) throws(ZMQError) {
        let lent = range.clamped(to: 0 ..< last.count)
        let cost = ReplyBudget.cost(of: head) + lent.count
        let account = head.first.flatMap { replyBudget.charge(client: $0, bytes: cost) }
        if let request, account == nil {
            let refusal = refusal(of: request, frames: head, cost: cost, now: now)
            if try actions.trySend(refusal) { report.actionsBytesSent += Self.bytes(of: refusal) }
            return
        }
        let sent = try last.withUnsafeBytes { (bytes) throws(ZMQError) in
            try actions.trySend(head, lending: UnsafeRawBufferPointer(rebasing: bytes[lent]), keptAliveBy: last) { account?.release(cost) }
        }
        if sent { report.actionsBytesSent += Self.bytes(of: head) + UInt64(lent.count) }
    }

    /// The `busy` error that replaces a reply over its client's budget; counts and warns (at most
    /// one warning every 10 s, with how many were refused since the previous one).
    private func refusal(of request: AuthorityEngine<R>.Outbox.RequestReply, frames: [[UInt8]], cost: Int, now: UInt64) -> [[UInt8]] {
        report.repliesRefusedBytes += 1
        refusedSinceWarning += 1
        let queued = frames.first.map { replyBudget.queuedBytes(client: $0) } ?? 0
        if lastRefusalWarning.map({ now >= $0 + 10_000 }) ?? true {
            let client = frames.first.map { PeerID($0).description } ?? "?"
            logger.warning("client \(client) leaves \(queued) bytes of replies unread: \(refusedSinceWarning) request(s) refused with busy since the last warning (--client-queue-bytes \(replyBudget.limit))")
            lastRefusalWarning = now
            refusedSinceWarning = 0
        }
        let refusal = AuthorityReply.error(
            ref: request.requestID, code: .busy,
            message: "this client has \(queued) bytes of replies it has not read, and this \(cost)-byte reply would exceed the authority's limit of \(replyBudget.limit) (--client-queue-bytes): read the replies, then ask again")
        return Array(frames.prefix(request.envelopeCount)) + refusal.frames(writer)
    }

    /// Acks that may not leave because their journal records could not be written, turned into
    /// an `unavailable` error for each `client_seq` (one message each, in order); any other
    /// reply unchanged.
    static func refusingAcks(_ reply: QueuedReply, because error: any Error, writer: HeaderWriter) -> [[[UInt8]]] {
        let acks = reply.acks
        guard !acks.isEmpty else { return [reply.frames(writer)] }
        return acks.map { ack in
            AuthorityReply.error(
                ref: ack.clientSeq, code: .unavailable,
                message: "the authority cannot write its journal (\(error)) and stops; whether this action was applied is unknown: resend it with the same client_seq once the authority is back"
            ).frames(writer, after: reply.envelope)
        }
    }

    /// Publishes the outbox's mutations (when subscribed: `mutations`), then `state` (the
    /// encoded state at the outbox's version) as a snapshot, or else a heartbeat when the feed
    /// has been idle.
    private func publish(_ outbox: AuthorityEngine<R>.Outbox, mutations: Bool, state: EncodedBytes?, now: UInt64) throws(ZMQError) {
        if mutations {
            for index in 0 ..< outbox.appliedPayloads.count {
                // No payload: the app's mutation type did not encode (the engine logged it).
                guard let payload = outbox.appliedPayloads[index] else { continue }
                let mutation = outbox.appliedMutations[index]
                report.feedBytesSent += UInt64(try feed.publish(.mutation(version: mutation.version, actionSeq: mutation.actionSeq, origin: mutation.origin, payload: payload), now: now))
            }
        }
        for event in outbox.jobEvents {
            report.feedBytesSent += UInt64(try feed.publish(.job(event), now: now))
        }
        for (name, payload) in outbox.projections {
            report.feedBytesSent += UInt64(try feed.publish(.projection(name: name, version: outbox.version, actionSeq: outbox.actionSeq, payload: payload), now: now))
        }
        if let state {
            try publishSnapshot(state, version: outbox.version, actionSeq: outbox.actionSeq, now: now)
        } else if now >= feed.lastPublished + idleFeedMilliseconds {
            report.feedBytesSent += UInt64(try feed.publish(.heartbeat(version: outbox.version, actionSeq: outbox.actionSeq), now: now))
        }
        noteFeedMark()
        report.observers = feedConnections
    }

    /// Binds the feed again when it waits for that, warning every 5 s while its port stays taken.
    private func bindFeedAgainIfNeeded(now: UInt64) throws(ZMQError) {
        guard let since = feed.unboundSince else { return }
        if try feed.bindAgainIfNeeded() {
            lastBindWarning = 0
            return
        }
        let waited = now &- since
        if waited >= 5_000, waited / 5_000 > lastBindWarning {
            lastBindWarning = waited / 5_000
            logger.warning("feed: \(endpoints.feed) is still taken \(waited / 1_000) s after it was unbound to lower the high-water mark; subscribers get nothing until it is bound again (retried every turn)")
        }
    }

    /// Reports the feed's high-water mark, and logs each time the feed was bound again to lower it.
    private func noteFeedMark() {
        report.feedHighWaterMark = UInt64(feed.highWaterMark)
        guard feed.rebinds > loggedRebinds else { return }
        loggedRebinds = feed.rebinds
        logger.notice("feed: the largest message is now \(feed.largestMessage) bytes, so each subscriber may queue \(feed.highWaterMark) messages (--feed-queue-bytes \(configuration.feedQueueBytes)); the feed was bound again for it and its subscribers reconnect")
    }

    private func publishSnapshot(_ state: EncodedBytes, version: UInt64, actionSeq: UInt64, now: UInt64) throws(ZMQError) {
        report.snapshotsPublished += 1
        report.feedBytesSent += UInt64(try feed.publishSnapshot(version: version, actionSeq: actionSeq, state: state, now: now))
        noteFeedMark()
    }
}
