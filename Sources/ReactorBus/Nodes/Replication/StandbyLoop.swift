import ReactorCore
import ReactorLog
import ReactorStorage
import ZeroMQ

/// A standby authority's loop: follows a primary's journal over a DEALER socket, journals each
/// record at the same LSN, reports `durable` after each commit, applies the records through the
/// recovery path (``RecordReplayer``), writes its own snapshots, and — once promoted — closes
/// all that and runs an ``AuthorityLoop`` on the same data directory, on the same thread.
///
/// A turn's records are applied after their `durable` left: a `sync` primary acks once a
/// standby has the records on disk, and applying them (as much CPU as the primary spent) is not
/// on that path. A record that then fails to apply stops the standby; it stays in its journal.
///
/// It binds no actions, workers or feed endpoint while a standby. Losing the primary keeps the
/// data and says `hello` again every heartbeat interval until one answers.
final class StandbyLoop<R: Reactor>: NodeLoop {
    private let reactor: R
    private let configuration: AuthorityConfiguration
    private let logger: Logger
    private let context: ZMQContext
    private let runtime: NodeRuntime
    private let poller: NodePoller
    private let metrics: NodeMetrics<AuthorityMetrics>
    private let promotion: Promotion<AuthorityNode<R>.Endpoints>
    private let primary: String
    private let engine: AuthorityEngine<R>
    private let durability: AuthorityDurability<R>
    private var replayer: RecordReplayer<R>
    private let dealer: ZMQSocket
    private let heartbeatMilliseconds: UInt64
    /// When the primary was last heard from, and whether it answered the last hello.
    private var lastHeard: UInt64 = 0
    private var following = false
    /// The primary's `welcome` said `packed`: its `records` carry their payloads in one frame.
    private var primaryPacks = false
    private var nextHeartbeat: UInt64 = 0
    /// A snapshot being fetched from the primary: its LSN, size and the bytes so far.
    private var fetch: (lsn: UInt64, size: UInt64, bytes: [UInt8])?
    /// Why following stopped for good (a refusal, a journal failure).
    private var fatal: (any Error)?
    /// Records appended this turn, not yet committed.
    private var uncommitted = 0
    /// Records journaled this turn and not yet applied, in LSN order.
    private var unapplied: [JournalRecord] = []

    let ready: AuthorityNode<R>.Endpoints

    init(reactor: R, configuration: AuthorityConfiguration, primary: String, logger: Logger, context: ZMQContext, runtime: NodeRuntime,
         poller: NodePoller, metrics: NodeMetrics<AuthorityMetrics>, promotion: Promotion<AuthorityNode<R>.Endpoints>) throws {
        guard let persistence = configuration.persistence else { throw ReplicationError.needsDataDirectory }
        self.reactor = reactor
        self.configuration = configuration
        self.primary = primary
        self.logger = logger
        self.context = context
        self.runtime = runtime
        self.poller = poller
        self.metrics = metrics
        self.promotion = promotion
        heartbeatMilliseconds = max(1, configuration.heartbeatInterval.wholeMilliseconds)
        engine = AuthorityEngine(reactor: reactor, configuration: configuration, logger: logger, journaling: true)
        durability = try AuthorityDurability(configuration: persistence, app: configuration.appName, logger: logger)
        durability.replicaSetup = .init(reactor: reactor, configuration: configuration, logger: logger)
        replayer = try durability.recover(into: engine, schema: configuration.schema, markSchema: false)
        dealer = try ZMQSocket(context: context, type: .dealer)
        try dealer.set(.linger, 0)
        try dealer.set(.receiveHighWaterMark, 0)
        if let security = configuration.security {
            // A primary with CURVE admits its own key on the replication socket: the authorities
            // that stand in for each other share one key pair, so a standby connects with it.
            try ClientSecurity(serverKey: security.publicKey, secretKey: security.secretKey).apply(to: dealer)
        }
        try dealer.connect(primary)
        ready = AuthorityNode<R>.Endpoints(actions: "", workers: "", feed: "", standbyOf: primary)
    }

    func run() {
        var promote = false
        do {
            let dealerIndex = try poller.register(dealer)
            let promotionIndex = poller.register(promotion.requests)
            logger.info("standby of \(primary) for app \(configuration.appName): journal at LSN \(durability.lastLSN); promote with SIGUSR1")
            try sendHello()
            nextHeartbeat = MonotonicClock.milliseconds() + heartbeatMilliseconds
            while !runtime.isStopping && fatal == nil {
                try poller.wait(until: nextHeartbeat)
                let now = MonotonicClock.milliseconds()
                if poller.isReadable(promotionIndex), !promotion.requests.drain().isEmpty {
                    promote = true
                    break
                }
                var batch = poller.receive(dealer, at: dealerIndex, batch: configuration.maxBatch)
                while let frames = try batch.next(), fatal == nil { try handle(frames, now: now) }
                if fatal == nil { try commit(now: now) }
                if now >= nextHeartbeat { try heartbeat(now: now) }
                engine.absorb(durability.takeReport())
                metrics.publish(engine.currentMetrics())
            }
        } catch let error as ZMQError where error.isTerminated {
            logger.info("context shut down: stopping")
        } catch {
            fatal = error
        }
        dealer.close()
        durability.finishSnapshotInProgress()
        // A final snapshot covers the whole journal: only when the state has every record in it.
        durability.close(final: durability.wantsFinalSnapshot && unapplied.isEmpty ? engine.checkpoint() : nil)
        engine.absorb(durability.takeReport())
        metrics.publish(engine.currentMetrics())
        if let fatal {
            runtime.failure.record(fatal)
            logger.error("standby stopped: \(fatal)")
            promotion.finish(.failure(ReplicationError.notPromoted("\(fatal)")))
            return
        }
        guard promote, !runtime.isStopping else {
            promotion.finish(.failure(ReplicationError.notPromoted("the node was stopped while a standby")))
            return
        }
        runPromoted()
    }

    /// Serves as the primary on the data directory just closed (recovery reads back exactly the
    /// state, client ledger and open jobs followed so far).
    private func runPromoted() {
        let state = engine.currentMetrics()
        logger.notice("promoted to primary at journal LSN \(durability.lastLSN), version \(state.version), action \(state.actionSeq) (term \(configuration.replication?.term ?? 0))")
        var promoted = configuration
        promoted.replication?.standbyOf = nil
        if promoted.replication?.endpoint == nil { promoted.replication = nil }
        let loop: AuthorityLoop<R>
        do {
            loop = try AuthorityLoop(reactor: reactor, configuration: promoted, logger: logger, context: context, runtime: runtime,
                                     poller: poller.renewed(), metrics: metrics)
        } catch {
            runtime.failure.record(error)
            logger.error("promotion failed: \(error)")
            promotion.finish(.failure(ReplicationError.notPromoted("\(error)")))
            return
        }
        promotion.finish(.success(loop.endpoints))
        loop.run()
    }

    private func send(_ message: ReplicationMessage) throws(ZMQError) {
        _ = try dealer.trySend([message.encoded()])
    }

    private func sendHello() throws(ZMQError) {
        try send(ReplicationMessage(.hello, term: configuration.replication?.term ?? 0, app: configuration.appName,
                                    schema: configuration.schema.version, after: durability.lastLSN, packed: true,
                                    crc: durability.recordCRC(at: durability.lastLSN)))
    }

    private func heartbeat(now: UInt64) throws(ZMQError) {
        nextHeartbeat = now + heartbeatMilliseconds
        // A snapshot written since the last records is counted, and the journal compacted,
        // even while no records come.
        durability.collectSnapshot(now: now)
        if following, now > lastHeard + heartbeatMilliseconds * 3 {
            following = false
            fetch = nil
            logger.warning("lost the primary \(primary) (silent for \(now - lastHeard) ms); keeping the journal at LSN \(durability.lastLSN) and retrying")
        }
        if following {
            try send(ReplicationMessage(.durable, lsn: durability.durableLSN))
        } else {
            try sendHello()
        }
    }

    private func handle(_ frames: [[UInt8]], now: UInt64) throws {
        guard let header = frames.first, let message = ReplicationMessage.decode(header) else {
            logger.warning("dropped a message from the primary that is not a replication header")
            return
        }
        lastHeard = now
        switch message.type {
        case .welcome:
            if !following { logger.info("following the primary \(primary) at its LSN \(message.lsn ?? 0) from LSN \(durability.lastLSN)") }
            following = true
            // A primary of an older release ignores `packed` and sends a frame per record.
            primaryPacks = message.packed == true
            // The hello's `after` counts for nothing in sync mode (it may name records not yet
            // committed): say what is committed now, rather than at the next heartbeat.
            try send(ReplicationMessage(.durable, lsn: durability.durableLSN))
        case .refused:
            fatal = ReplicationError.refused(code: message.code ?? "?", message: message.message ?? "")
        case .heartbeat:
            if message.code == "hello" || !following { try sendHello() }
        case .records:
            guard following else { return }
            guard primaryPacks else {
                try journal(Array(frames.dropFirst()), first: message.first ?? 0)
                return
            }
            guard frames.count == 2, let payloads = ReplicationRecords.unpack(frames[1]) else {
                logger.warning("dropped a records message from the primary whose body is not one array of records; asking again from LSN \(durability.lastLSN + 1)")
                try sendHello()
                return
            }
            try journal(payloads, first: message.first ?? 0)
        case .snapshot:
            guard let lsn = message.lsn, let size = message.size else { return }
            logger.info("the primary's journal no longer has the records after LSN \(durability.lastLSN): fetching its snapshot at LSN \(lsn) (\(size) bytes)")
            fetch = (lsn, size, [])
            try send(ReplicationMessage(.chunk, lsn: lsn, offset: 0))
        case .snapshotChunk:
            try received(chunk: frames.count > 1 ? frames[1] : [], message)
        default:
            logger.debug("ignored a \(message.type.rawValue) message from the primary")
        }
    }

    /// Journals `payloads` (records from LSN `first`); they are applied after the turn's commit.
    private func journal(_ payloads: [[UInt8]], first: UInt64) throws {
        let expected = durability.lastLSN + 1
        guard first <= expected else {
            // A gap (records lost in a reconnect): start again from the journal's end.
            logger.warning("records from LSN \(first) do not follow this journal's LSN \(expected - 1); asking the primary again")
            try sendHello()
            return
        }
        let skip = Int(expected - first)
        guard skip < payloads.count else { return }
        let fresh = Array(payloads[skip...])
        unapplied += try durability.appendReplicated(fresh, first: expected)
        uncommitted += fresh.count
    }

    /// Commits the records the turn received (one commit for all), reports the LSN durable,
    /// applies the records, and snapshots if one fell due: from a checkpoint of the state, or,
    /// once the state is large (``PersistenceConfiguration/replicaSnapshotsAbove``), from a
    /// ``SnapshotReplica``, so that this loop never copies the state and its next `durable`
    /// never waits for that copy.
    private func commit(now: UInt64) throws {
        guard uncommitted > 0 else { return }
        // The turn's records are appended already: a demand of 0 more records means due now.
        let due = durability.checkpointDemand(now: now) == 0
        let committed = try durability.commitReplicated()
        uncommitted = 0
        try send(ReplicationMessage(.durable, lsn: committed))
        try applyJournaled()
        let position = engine.inSequencer { ($0.version, $0.actionSeq) }
        durability.snapshot(due ? engine.checkpoint() : nil, coveringThrough: committed, at: position, recordsSchema: replayer.stored, now: now)
    }

    /// Applies the records journaled and not yet applied, in order. When one fails they all stay
    /// listed: the state is then behind the journal, and no snapshot may claim otherwise.
    private func applyJournaled() throws {
        try replayer.replay(unapplied, into: engine)
        unapplied.removeAll(keepingCapacity: true)
    }

    private func received(chunk bytes: [UInt8], _ message: ReplicationMessage) throws {
        guard var fetching = fetch, message.lsn == fetching.lsn, message.offset == UInt64(fetching.bytes.count) else { return }
        fetching.bytes += bytes
        fetch = fetching
        if UInt64(fetching.bytes.count) < fetching.size {
            guard !bytes.isEmpty else { return }
            try send(ReplicationMessage(.chunk, lsn: fetching.lsn, offset: UInt64(fetching.bytes.count)))
            return
        }
        fetch = nil
        let migrator = SchemaMigrator<R>(schema: configuration.schema, app: configuration.appName)
        let (checkpoint, stored) = try migrator.load(fetching.bytes, file: "the primary's snapshot at LSN \(fetching.lsn)")
        _ = try durability.commitReplicated()
        uncommitted = 0
        try applyJournaled()
        try durability.installSnapshot(fetching.bytes, lsn: fetching.lsn)
        engine.restore(checkpoint)
        replayer = RecordReplayer(schema: configuration.schema, app: configuration.appName, stored: stored)
        logger.info("installed the primary's snapshot at LSN \(fetching.lsn): version \(checkpoint.sequencer.version)")
        try send(ReplicationMessage(.durable, lsn: fetching.lsn))
    }
}
