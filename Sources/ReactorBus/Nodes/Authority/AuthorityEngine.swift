import MessagePack
import ReactorCore
import ReactorLog
import ReactorWire
import ZeroMQ

/// The authority's logic without sockets: frames in, frames and journal records out.
///
/// The loop hands it each message as received (routing id first) and, after a batch, takes an
/// ``Outbox``: everything the batch requires (replies, worker messages, journal records, what to
/// publish, a checkpoint when a snapshot is due). The turn goes one way: the loop carries the
/// outbox out and never reads the engine back; what it saw doing so comes back as an
/// ``AuthorityLoopReport``, so the engine alone writes the metrics. Keeping sockets out makes the
/// message handling testable and fuzzable with plain byte arrays. Bad input is answered or
/// dropped and counted; it never changes state.
///
/// Not thread-safe: owned by the authority's loop thread.
///
/// `package` (not `public`): the libFuzzer harness `fuzz-authority` (Fuzz/, docs/FUZZING.md), a
/// target of this package, drives it directly; it is no part of the library's API.
package final class AuthorityEngine<R: Reactor> {
    let configuration: AuthorityConfiguration
    let logger: Logger
    /// Whether journal records are collected (only with persistence).
    let isJournaling: Bool
    // The state touched for every action or job (`sequencer`, `dispatcher`, `clients`,
    // `actionClients`, `inFlight`, `cancelledJobs`, `metrics`, `outbox`, `jobBatchReaders`,
    // `ackBatchReaders`, `keptAcceptance`, and the flags read for each event: `jobWatch`,
    // `followsMutations`, `replaying`) is `@exclusivity(unchecked)`: the run-time check of each
    // access to a class's stored property was 3.7% of the sync authority's samples (and the
    // three flags' about 1% of an async authority's).
    // Safe because the engine is not `Sendable` and is driven by one loop thread, and no access
    // to these properties can overlap another: the engine's methods never call out while they
    // modify one except into the value itself (`inSequencer`, `withLedger`, `withMetrics` hand
    // the property to a closure that only calls its own methods; the sequencer calls the app's
    // reactor, which holds no reference to the engine; the dispatcher calls nothing). The
    // compiler still checks every access it can see statically.
    @exclusivity(unchecked) package internal(set) var sequencer: Sequencer<R>
    @exclusivity(unchecked) var dispatcher: Dispatcher
    @exclusivity(unchecked) private(set) var clients: ClientLedger
    /// Client of each action that still has open jobs, by action sequence number: a ring, not
    /// a hash table (see ``SequenceWindow``), as it holds every action of a backlog.
    @exclusivity(unchecked) private(set) var actionClients = SequenceWindow<String>()
    @exclusivity(unchecked) private var inFlight = InFlightCounts()
    /// Jobs cancelled while a worker held them (the most recent ones): what their workers still
    /// send is counted as `cancelled_results_dropped`.
    @exclusivity(unchecked) private var cancelledJobs = RecentJobs(limit: 65_536)
    /// The term (epoch) of this authority's leadership when it was elected (`--election`), named
    /// in every `pong` and `welcome` so that peers never follow an older authority again; `nil`
    /// for an authority that runs without an election.
    package var term: UInt64?
    /// Dispatch counts and times, while someone follows job events.
    @exclusivity(unchecked) private var jobWatch = JobWatch()
    @exclusivity(unchecked) package internal(set) var metrics = AuthorityMetrics()
    @exclusivity(unchecked) var outbox = Outbox()
    /// Workers that said (this session) that they read `jobs` messages, with the largest frame
    /// each reads: their jobs of a turn go as one message (``WorkerJobBatches``).
    @exclusivity(unchecked) private var jobBatchReaders: [PeerID: Int] = [:]
    /// The last accepted action's ``Acceptance`` when it issued, cancelled or finished jobs,
    /// until ``accept(_:client:seq:payload:now:dispatch:)`` takes it (see ``AcceptanceSummary``).
    @exclusivity(unchecked) private var keptAcceptance: Acceptance<R.Mutation, R.Effect>?
    /// The client connections (routing ids) that read `acks` messages: at least the 65,536 used
    /// most recently (``RecentSet``); a forgotten one gets plain `ack`s.
    @exclusivity(unchecked) private var ackBatchReaders = RecentSet<[UInt8]>(capacity: 65_536)
    /// Set while a journaled record is replayed (``replay(_:migrated:collectingApplied:)``): the
    /// record is not journaled again, and its applied mutations go to ``Outbox/applied`` only
    /// when the caller collects them.
    @exclusivity(unchecked) private var replaying: Replaying?

    private enum Replaying {
        case collectingApplied, discardingApplied
    }

    /// Whether the outbox gathers applied mutations for the feed's `mutation` topic: set by the
    /// loop at the start of each turn, from the feed's subscriptions (so a turn gathers them
    /// exactly when its ``Outbox/Demand`` will ask for them). On by default, for callers that
    /// read ``Outbox/applied`` themselves.
    ///
    /// Why: with no mutation subscriber, gathering them (generic code, asking the runtime for the
    /// reactor's types on each append) was 4% of a busy authority's samples, for nothing.
    @exclusivity(unchecked) package var followsMutations = true

    /// Whether applied mutations go to ``Outbox/applied``: in a replay, only when the caller
    /// collects them; otherwise while ``followsMutations``.
    private var queuesApplied: Bool {
        switch replaying {
        case .collectingApplied?: true
        case .discardingApplied?: false
        case nil: followsMutations
        }
    }
    /// Which worker runs which subscription run (see `AuthorityEngine+Subscriptions.swift`).
    var subscriptionPlacement = SubscriptionPlacement()

    private let encoder = MessagePackEncoder()
    /// Encodes the whole state for `snapshot` replies, fetches and the feed. Its bytes are only
    /// ever decoded, never compared, so dictionaries go out in their own order: sorting the keys
    /// of a state with a million entries was a quarter of its encoding. (Projections and every
    /// other value keep `encoder`'s sorted keys: the projection feed compares their bytes.)
    let stateEncoder = MessagePackEncoder(sortKeys: false)
    let decoder = MessagePackDecoder()
    let writer = HeaderWriter()
    private let heartbeatMilliseconds: UInt64
    /// Drawn once per process start and sent in every `pong`, so clients notice a restart.
    package let startID = UInt64.random(in: 1 ... .max)
    /// The state as last encoded for a `snapshot` reply, and its version: the state only changes
    /// with the version, so every request until the next mutation shares these bytes (a batch of
    /// requests holds one copy of the state, not one per request).
    var encodedStateCache: (version: UInt64, bytes: EncodedBytes)?
    /// Encoded states that `snapshot_chunk` requesters are fetching, by version.
    var transfers = SnapshotTransfers()
    /// Starts encoding a state off the loop (``StateEncode``), for a fetch or the feed; set by
    /// the loop. `nil` (the engine alone, in tests and fuzzing): states are encoded here.
    var startStateEncode: ((StateEncode) -> Void)?
    /// The encoding under way off the loop. One at a time: a request (or the feed) that asks
    /// meanwhile waits for it; a request that arrived at a later version than it has is then
    /// answered from the next encoding, never with a state older than the one it asked at.
    var stateEncoding: StateEncodingUnderWay?
    /// The size of the state's last encoding (or of the snapshot recovered from); `nil` before one.
    var lastStateBytes: Int? {
        didSet { metrics.stateBytes = UInt64(lastStateBytes ?? 0) }
    }
    /// A feed snapshot or whole `snapshot` reply of a state whose last encoding had at least
    /// this many bytes is encoded off the loop (``StateEncode``), when the loop can; a smaller
    /// one on the loop, where it costs less than starting a thread. 1 MiB: encoded in about 5 ms.
    package var encodesOffLoopAbove = 1 << 20
    /// Set by a loop that has its snapshot replica encode the state: the feed's snapshots of a
    /// large state, fetches and whole `snapshot` replies are then neither encoded nor copied
    /// here (``Outbox/encodeElsewhere``, ``FeedSnapshot/Encoding/elsewhere(version:)``).
    package var encodesElsewhere = false

    /// The client id of the last action read: a client's next action in a burst carries the
    /// same bytes, and then reuses this `String` instead of making and checking a new one.
    private var lastClientID: String?
    /// Messages refused as over `--max-message-bytes` since the last warning, and when that was.
    private var tooLargeSinceWarning = 0
    private var lastTooLargeWarning: UInt64?
    /// Transforms: the reactor's projections and the values last published of each.
    private var projectionFeed: ProjectionFeed<R.State>

    package init(reactor: R, configuration: AuthorityConfiguration, logger: Logger, journaling: Bool) {
        self.configuration = configuration
        self.logger = logger
        self.isJournaling = journaling
        self.sequencer = Sequencer(reactor: reactor)
        self.heartbeatMilliseconds = max(1, configuration.heartbeatInterval.wholeMilliseconds)
        self.dispatcher = Dispatcher(
            deadAfterMilliseconds: heartbeatMilliseconds * UInt64(max(1, configuration.missedHeartbeats)),
            jobTimeoutMilliseconds: max(1, configuration.jobTimeout.wholeMilliseconds),
            maxWorkerCapacity: configuration.maxWorkerCapacity,
            quarantineAfter: configuration.quarantineAfter
        )
        self.clients = ClientLedger(limits: configuration.clientLedger)
        self.projectionFeed = ProjectionFeed(reactor.projections)
    }

    // MARK: Actions socket

    /// Handles one message from the actions ROUTER (routing id first).
    package func handleClient(_ frames: [[UInt8]], now: UInt64) {
        guard let (envelope, body) = Self.split(frames) else {
            metrics[.malformed] += 1
            return
        }
        if let refusal = refusalIfTooLarge(body, from: "client \(PeerID(frames[0]))", now: now) {
            reply(envelope, .error(ref: ClientMessage.reference(in: body), code: .tooLarge, message: refusal))
            return
        }
        let message: ClientMessage
        do {
            message = try ClientMessage(frames: body, reusingClientID: lastClientID)
        } catch {
            count(error)
            logger.debug("refused client message: \(error)")
            reply(envelope, .error(ref: ClientMessage.reference(in: body), code: error.code, message: error.message))
            return
        }
        switch message {
        case .action(let client, let seq, let payload):
            lastClientID = client
            handleAction(envelope, client: client, seq: seq, payload: payload, now: now)
        case .snapshot(let id):
            handleWholeSnapshot(envelope, id: id)
        case .ping(let id):
            let pong = AuthorityReply.pong(requestID: id, version: sequencer.version, startID: startID, app: configuration.appName,
                                           schema: configuration.schema.version, compatible: configuration.schema.compatibleVersions.sorted(), term: term)
            outbox.promptReplies.append(pong.frames(writer, after: envelope))
        case .stats(let id):
            reply(envelope, .stats(requestID: id, counters: currentMetrics().dictionary), request: id)
        case .snapshotChunk(let id, let version, let offset, let maxBytes):
            handleSnapshotChunk(envelope, id: id, version: version, offset: offset, maxBytes: maxBytes, now: now)
        case .features(let id, let features):
            // A REQ peer's envelope has a delimiter: it reads one reply per request, never a batch.
            guard envelope.count == 1, let routingID = envelope.first else {
                reply(envelope, .features(requestID: id, features: []))
                return
            }
            if features.contains(ClientFeature.acks) { ackBatchReaders.insert(routingID) } else { ackBatchReaders.remove(routingID) }
            reply(envelope, .features(requestID: id, features: AuthorityFeature.forClients))
        }
    }

    /// Why a message (the frames after the routing envelope) is refused for its size, or `nil`:
    /// `--max-message-bytes` bounds what the authority accepts. Counts it, and logs a warning
    /// (one every 10 s at most, with how many were refused since the previous one).
    private func refusalIfTooLarge(_ body: ArraySlice<[UInt8]>, from peer: @autoclosure () -> String, now: UInt64) -> String? {
        var size = 0
        for frame in body { size += frame.count }
        guard size > configuration.maxMessageBytes else { return nil }
        metrics[.messagesTooLarge] += 1
        tooLargeSinceWarning += 1
        let words = "the message is \(size) bytes, over the authority's limit of \(configuration.maxMessageBytes) bytes (--max-message-bytes)"
        if lastTooLargeWarning.map({ now >= $0 + 10_000 }) ?? true {
            logger.warning("refused a message from \(peer()): \(words); \(tooLargeSinceWarning) refused since the last warning")
            lastTooLargeWarning = now
            tooLargeSinceWarning = 0
        }
        return words + ": nothing was applied; send less at once, or raise the authority's --max-message-bytes"
    }

    private func handleAction(_ envelope: Envelope, client: String, seq: UInt64, payload: [UInt8], now: UInt64) {
        // Through `inout`: a method called on the stored ledger itself runs on a copy of it
        // (each of its tables retained and released), as `inSequencer` explains.
        switch withLedger({ $0.verdict(client: client, seq: seq, payload: payload) }) {
        case .duplicate(let ack):
            metrics[.actionsDuplicate] += 1
            sendAck(envelope, clientSeq: seq, actionSeq: ack.actionSeq, version: ack.version)
            return
        case .appliedEarlier:
            // Applied once already; its ack is no longer kept. The current version includes it.
            metrics[.actionsDuplicate] += 1
            sendAck(envelope, clientSeq: seq, actionSeq: 0, version: sequencer.version)
            return
        case .conflict(let ack):
            metrics[.actionsConflict] += 1
            reply(envelope, .error(ref: seq, code: .conflict, message: "client_seq \(seq) was accepted as action \(ack.actionSeq) with another payload; nothing was applied: number every new action with the next client_seq"))
            return
        case .stale:
            metrics[.actionsStale] += 1
            reply(envelope, .error(ref: seq, code: .stale, message: "client_seq \(seq) is older than what the authority remembers of client '\(client)'; it may or may not have been applied"))
            return
        case .unknownClient(let highest):
            metrics[.actionsUnknownClient] += 1
            reply(envelope, .error(ref: seq, code: .unknownClient, message: "the authority no longer remembers client '\(client)' (more than \(clients.limits.maxClients) other clients were seen since; raise --max-clients); client_seq \(seq) ≤ \(highest) may or may not have been applied, nothing was applied now: check the state, then send new actions numbered above \(highest) or under a new client id"))
            return
        case .new:
            break
        }
        // Empty while no action has effects running: then no client's name needs hashing.
        guard inFlight.isEmpty || inFlight.count(of: client) < configuration.maxInFlightPerClient else {
            metrics[.actionsBusy] += 1
            reply(envelope, .error(ref: seq, code: .busy, message: "\(configuration.maxInFlightPerClient) actions of this client still have effects running; retry later"))
            return
        }
        let action: R.Action
        do {
            action = try decoder.decode(R.Action.self, from: payload)
        } catch {
            metrics[.badActions] += 1
            reply(envelope, .error(ref: seq, code: .badAction, message: "the payload is not a \(configuration.appName) action: \(AppValueError.describe(error, type: R.Action.self))"))
            return
        }
        let ack = accept(action, client: client, seq: seq, payload: payload, now: now, dispatch: true)
        sendAck(envelope, clientSeq: seq, actionSeq: ack.actionSeq, version: ack.version)
    }

    /// Accepts a decoded action: sequencer, client ledger, in-flight bookkeeping, jobs.
    @discardableResult
    private func accept(_ action: R.Action, client: String, seq: UInt64, payload: [UInt8], now: UInt64, dispatch: Bool) -> ClientLedger.Ack {
        // Through the witness that appends the applied mutations to the outbox itself and
        // returns a summary whose type does not depend on the reactor: this code holds no
        // `Acceptance` unless the action issued, cancelled or finished jobs (see
        // ``AcceptanceSummary``).
        let collecting = queuesApplied
        let summary = R._sequencerAccept(action, in: &sequencer, collecting: collecting, into: &outbox.appliedMutations, keeping: &keptAcceptance)
        if collecting { outbox.appliedPayloads.append(contentsOf: repeatElement(nil, count: summary.appliedCount)) }
        let ack = ClientLedger.Ack(actionSeq: summary.actionSeq, version: summary.version)
        clients.record(client: client, seq: seq, payload: payload, ack: ack)
        let (appliedCount, jobCount, plain) = (UInt64(summary.appliedCount), summary.jobCount, summary.isPlain)
        // One access to the counters for all four: each `metrics[...] +=` on its own is a
        // checked access to this class's storage.
        withMetrics { metrics in
            metrics[.actionsAccepted] += 1
            metrics[.mutationsApplied] += appliedCount
            if plain { metrics[.mutationsSync] += appliedCount }
            if jobCount == 0 { metrics[.actionsApplied] += 1 }
        }
        if isJournaling && replaying == nil { outbox.records.append(.accepted(client: client, clientSeq: seq, action: payload)) }
        guard summary.keptAcceptance, let acceptance = keptAcceptance.take() else { return ack }
        if !plain { absorbCancellations(acceptance, now: now) }
        if jobCount != 0 {
            actionClients.insert(client, for: summary.actionSeq)
            inFlight.add(client)
            if dispatch { enqueueJobs(of: acceptance, now: now) }
        }
        return ack
    }

    /// Queues an accepted action's jobs with the dispatcher and sends what it assigns, reading
    /// them through the reactor's specialised witness (`Reactor._acceptanceVisitJobs(_:_:)`).
    func enqueueJobs(of acceptance: Acceptance<R.Mutation, R.Effect>, now: UInt64) {
        R._acceptanceVisitJobs(acceptance) { id, kind in
            if let assignment = withDispatcher({ $0.enqueue(id, kind: kind, now: now) }) { send(assignment) }
        }
    }

    // MARK: Workers socket

    /// Handles one message from the workers ROUTER (routing id first).
    package func handleWorker(_ frames: [[UInt8]], now: UInt64) {
        guard frames.count >= 2 else {
            metrics[.malformed] += 1
            return
        }
        let peer = PeerID(frames[0])
        let body = Array(frames.dropFirst())
        if let refusal = refusalIfTooLarge(body[...], from: "worker \(workerLabel(peer))", now: now) {
            toWorker(peer, .error(ref: ClientMessage.reference(in: body), code: .tooLarge, message: refusal))
            return
        }
        let message: WorkerMessage
        do {
            message = try WorkerMessage(frames: body)
        } catch {
            count(error)
            logger.debug("refused worker message from \(workerLabel(peer)): \(error)")
            toWorker(peer, .error(ref: 0, code: error.code, message: error.message))
            return
        }
        if case .ready(let name, let app, let capacity, let kinds, let schema) = message {
            guard app == configuration.appName else {
                metrics[.wrongApp] += 1
                logger.warning("worker \(name) (\(peer)) serves app '\(app)', not '\(configuration.appName)': refused")
                toWorker(peer, .error(ref: 0, code: .wrongApp, message: "this authority runs '\(configuration.appName)', not '\(app)'"))
                return
            }
            guard configuration.schema.accepts(schema) else {
                metrics[.wrongApp] += 1
                let refusal = Self.schemaRefusal(app: app, peer: schema, own: configuration.schema)
                logger.warning("worker \(name) (\(peer)): \(refusal): refused")
                toWorker(peer, .error(ref: 0, code: .wrongApp, message: refusal))
                return
            }
            let known = dispatcher.knows(peer)
            let trusted = dispatcher.trustedCapacity(announced: capacity)
            let assignments = dispatcher.register(peer, name: name, capacity: trusted, kinds: kinds, now: now)
            metrics[.workersRegistered] += 1
            if capacity > UInt64(trusted) {
                metrics[.capacitiesClamped] += 1
                logger.warning("worker \(name) (\(peer)) announced capacity \(capacity): trusted with \(trusted) (--max-worker-capacity)")
            }
            let standing = dispatcher.isQuarantined(peer) ? " (still quarantined)" : ""
            logger.info("worker \(name) (\(peer)) \(known ? "re-registered" : "registered"): capacity \(trusted), kinds \(kinds.isEmpty ? "all" : kinds.joined(separator: ","))\(standing)")
            // A new session: the worker says again what it reads once it hears what this reads.
            jobBatchReaders[peer] = nil
            toWorker(peer, .welcome(heartbeatMilliseconds: heartbeatMilliseconds, term: term))
            // What this authority reads beyond every release's messages, before any job.
            toWorker(peer, .heartbeat(features: AuthorityFeature.all))
            for assignment in assignments { send(assignment) }
            // A new session: whatever subscriptions it ran are gone until it says `subscriber`.
            subscriptionPlacement.forget(peer)
            return
        }
        guard withDispatcher({ $0.knows(peer) }) else {
            metrics[.unknownWorkerMessages] += 1
            toWorker(peer, .error(ref: 0, code: .unknownWorker, message: "unknown worker: send ready first"))
            return
        }
        dispatcher.heard(from: peer, now: now)
        switch message {
        case .ready, .heartbeat:
            break
        case .features(let features, let maxMessageBytes):
            if features.contains(WorkerFeature.jobs) { jobBatchReaders[peer] = Int(clamping: maxMessageBytes) }
        case .bye:
            let label = workerLabel(peer)
            jobBatchReaders[peer] = nil
            let requeued = dispatcher.forget(peer, now: now)
            subscriptionPlacement.forget(peer)
            logger.info("worker \(label) said bye; \(requeued.requeued.count) job(s) go elsewhere")
            metrics[.jobsRedispatched] += UInt64(requeued.requeued.count)
            for assignment in requeued.assignments { send(assignment) }
        case .subscriber(let kinds):
            handleSubscriber(peer, kinds: kinds)
        case .event(let run, let index, let payload):
            handleSubscriptionEvent(peer, run: run, index: index, payload: payload, now: now)
        case .emit, .done, .doneWithEmit:
            handleReport(message, from: peer, now: now)
        case .reports(let reports):
            // Each exactly as if it had come alone, in order.
            for report in reports { handleReport(report, from: peer, now: now) }
        case .failed(let job, let failure):
            if dropIfCancelled(job) { return }
            guard report(job, by: peer, now: now) else { return }
            metrics[.jobsFailed] += 1
            logger.warning("job \(job) failed for good on \(workerLabel(peer)): \(failure)")
            noteJob { $0.ended(job, .failed, worker: dispatcher.name(of: peer), attempts: UInt32(clamping: failure.attempts)) }
            recordFailure(job, failure)
        }
    }

    /// An `emit`, `done` or `doneWithEmit` from `peer` (alone or from a `reports` message).
    private func handleReport(_ report: WorkerMessage, from peer: PeerID, now: UInt64) {
        switch report {
        case .emit(let job, let index, let payload):
            handleEmit(job, index: index, payload: payload, from: peer)
        case .done(let job, let count):
            handleDone(job, emitCount: count, from: peer, now: now)
        case .doneWithEmit(let job, let count, let payload):
            // Exactly an `emit` of the last mutation followed by a `done`, in one message.
            handleEmit(job, index: count - 1, payload: payload, from: peer)
            handleDone(job, emitCount: count, from: peer, now: now)
        default:
            break
        }
    }

    /// The `index`-th mutation of `job`, from `peer`: applied in its turn, unless the job was
    /// cancelled, is not `peer`'s, or the payload is not the app's mutation.
    private func handleEmit(_ job: JobID, index: UInt32, payload: [UInt8], from peer: PeerID) {
        if dropIfCancelled(job) { return }
        guard withDispatcher({ $0.isOwner(peer, of: job) }) else {
            metrics[.foreignReports] += 1
            return
        }
        // `do`, not `try?`: an optional mutation made this unspecialised code look up
        // `Optional<Mutation>` at run time, per emit.
        let mutation: R.Mutation
        do {
            mutation = try decoder.decode(R.Mutation.self, from: payload)
        } catch {
            metrics[.badMutations] += 1
            toWorker(peer, .error(ref: job.actionSeq, code: .malformed, message: "emit \(index) of job \(job) is not a \(configuration.appName) mutation"))
            return
        }
        record(.emitted(job: job, emitIndex: index, mutation: payload)) { sequencer, collecting, applied throws(SequencerError) in
            try R._sequencerApply(job: job, emitIndex: index, mutation: mutation, in: &sequencer, collecting: collecting, into: &applied)
        } payload: { payload }
    }

    /// `peer` says its run of `job` returned after `count` mutations: the job ends once they are
    /// all applied, or fails now when some never arrived.
    private func handleDone(_ job: JobID, emitCount count: UInt32, from peer: PeerID, now: UInt64) {
        if dropIfCancelled(job) { return }
        guard report(job, by: peer, now: now) else { return }
        // A worker's messages arrive in order, so every mutation a DONE declares is here by
        // now; one that is missing was never sent (or was refused) and would hold the job
        // open for ever. The job fails instead: its contiguous mutations, then the app's hook.
        if let received = inSequencer({ R._sequencerReceivedEmits(of: job, in: $0) }), received < count {
            metrics[.incompleteReports] += 1
            metrics[.jobsFailed] += 1
            let failure = EffectFailure(message: "worker reported \(count) mutation(s) but \(received) arrived", attempts: 1)
            logger.warning("job \(job) on \(workerLabel(peer)): \(failure.message); the job fails")
            noteJob { $0.ended(job, .failed, worker: dispatcher.name(of: peer), attempts: UInt32(clamping: failure.attempts)) }
            recordFailure(job, failure)
            return
        }
        metrics[.jobsDone] += 1
        noteJob { $0.ended(job, .done, worker: dispatcher.name(of: peer)) }
        record(.completed(job: job, emitCount: count)) { sequencer, collecting, applied throws(SequencerError) in
            try R._sequencerComplete(job: job, emitCount: count, in: &sequencer, collecting: collecting, into: &applied)
        }
    }

    // MARK: Cancellation

    /// What an action's cancellations did: counts its mutations by origin, stops each cancelled
    /// job (out of the dispatch queue, or a `cancel` to the workers holding it, whose late
    /// results are then counted and dropped) and ends the actions whose last job ended.
    func absorbCancellations(_ acceptance: Acceptance<R.Mutation, R.Effect>, now: UInt64) {
        var origins = OriginCounts()
        for applied in acceptance.applied { origins.count(applied.origin) }
        countOrigins(origins)
        metrics[.jobsCancelled] += UInt64(acceptance.cancelled.count)
        for job in acceptance.cancelled {
            let (_, holders, assignments) = dispatcher.cancel(job, now: now)
            noteJob { $0.ended(job, .cancelled, worker: holders.first.flatMap { dispatcher.name(of: $0) }) }
            for peer in holders {
                toWorker(peer, .cancel(job))
                cancelledJobs.insert(job)
            }
            for assignment in assignments { send(assignment) }
        }
        for actionSeq in acceptance.completedActions { completeAction(actionSeq) }
        if !acceptance.cancelled.isEmpty {
            logger.debug("action \(acceptance.actionSeq) cancelled job(s) \(acceptance.cancelled.map(\.description).joined(separator: ", "))")
        }
    }

    /// Counts applied mutations by origin, in one access to the counters.
    private func countOrigins(_ origins: OriginCounts) {
        withMetrics { metrics in
            metrics[.mutationsSync] += UInt64(origins.sync)
            metrics[.mutationsAsync] += UInt64(origins.async)
            metrics[.mutationsFailure] += UInt64(origins.failure)
            metrics[.mutationsCancel] += UInt64(origins.cancelled)
        }
    }

    /// Whether a worker's report is for a job cancelled while it held it: counted and dropped.
    private func dropIfCancelled(_ job: JobID) -> Bool {
        guard cancelledJobs.contains(job) else { return false }
        metrics[.cancelledResultsDropped] += 1
        return true
    }

    /// Frees the worker's slot; whether the report is the owner's to make.
    private func report(_ job: JobID, by peer: PeerID, now: UInt64) -> Bool {
        let (owned, recovered) = dispatcher.finished(job, by: peer, now: now)
        if recovered {
            metrics[.workersRecovered] += 1
            logger.notice("worker \(workerLabel(peer)) finished its probation job in time: capacity \(dispatcher.trustedCapacity(of: peer) ?? 0) again")
        }
        while let assignment = dispatcher.assignNext(now: now) { send(assignment) }
        if !owned { metrics[.foreignReports] += 1 }
        return owned
    }

    /// Applies one async event through the sequencer and records its consequences. `apply`
    /// runs the reactor's witness, which appends what the event applied to the outbox itself
    /// (when the feed follows mutations) and returns an outcome whose type does not depend on
    /// the reactor: this code holds no generic value (see ``EventOutcome``).
    private func record(_ event: AuthorityRecord, _ apply: (inout Sequencer<R>, Bool, inout [AppliedMutation<R.Mutation>]) throws(SequencerError) -> EventOutcome,
                        payload: () -> [UInt8]? = { nil }) {
        let outcome: EventOutcome
        do {
            outcome = try apply(&sequencer, queuesApplied, &outbox.appliedMutations)
        } catch {
            metrics[.unknownJobs] += 1
            logger.debug("refused async event: \(error)")
            return
        }
        switch outcome.disposition {
        case .duplicate:
            metrics[.emitsDuplicate] += 1
            return
        case .buffered:
            metrics[.emitsBuffered] += 1
        case .applied:
            break
        }
        if isJournaling { outbox.records.append(event) }
        absorb(outcome, firstPayload: payload())
    }

    /// Records a job that failed for good: its contiguous mutations, then the app's failure hook.
    private func recordFailure(_ job: JobID, _ failure: EffectFailure) {
        record(.failed(job: job, failure: failure)) { sequencer, collecting, applied throws(SequencerError) in
            try Self.fail(job, failure, in: &sequencer, collecting: collecting, into: &applied)
        }
    }

    /// A job's failure, reported as the reactor's witnesses report the other events. Through the
    /// sequencer's generic method, not a witness of its own: failures are rare.
    private static func fail(_ job: JobID, _ failure: EffectFailure, in sequencer: inout Sequencer<R>, collecting: Bool,
                             into applied: inout [AppliedMutation<R.Mutation>]) throws(SequencerError) -> EventOutcome {
        EventOutcome(try sequencer.fail(job: job, error: failure), collecting: collecting, into: &applied)
    }

    /// Counts what an event applied and queues its payloads beside the mutations the witness
    /// queued: only the event's own mutation arrived encoded; released buffered ones are
    /// encoded when the loop asks for them.
    private func absorb(_ outcome: EventOutcome, firstPayload: [UInt8]?) {
        let applied = outcome.applied
        let total = applied.total
        if total > 0 {
            metrics[.mutationsApplied] += UInt64(total)
            countOrigins(applied)
            if queuesApplied {
                if total == 1 {
                    outbox.appliedPayloads.append(firstPayload)
                } else {
                    outbox.appliedPayloads.append(contentsOf: repeatElement(nil, count: total))
                }
            }
        }
        for actionSeq in outcome.completedActions { completeAction(actionSeq) }
    }

    /// Queues the mutations an accepted action applied for the feed; their payloads are encoded
    /// when the loop asks for them (see ``takeOutbox(_:)``).
    ///
    /// The check comes first and inline: the generic body asks the runtime for the reactor's
    /// types on entry, which a standby's replay, queueing nothing, paid on every record.
    @inline(__always)
    func queueForFeed(_ applied: [AppliedMutation<R.Mutation>]) {
        if queuesApplied { appendForFeed(applied) }
    }

    @inline(never)
    private func appendForFeed(_ applied: [AppliedMutation<R.Mutation>]) {
        outbox.appliedMutations.append(contentsOf: applied)
        outbox.appliedPayloads.append(contentsOf: repeatElement(nil, count: applied.count))
    }

    /// Runs `body` on the sequencer where it is stored. A method of the generic `Sequencer`
    /// called on the stored property itself runs on a copy of it (the property is read into a
    /// temporary first), which retains and releases each of its tables, per call.
    ///
    /// The engine calls the reactor's sequencer witnesses (`R._sequencerAccept`, …) rather than
    /// the `Sequencer` methods that forward to them: calling a method of `Sequencer<R>` from
    /// this unspecialised code asks the runtime for that type's metadata on every call, while
    /// `R` and its witnesses come with the engine (see Reactor+Specialization.swift).
    @inline(__always)
    func inSequencer<T>(_ body: (inout Sequencer<R>) -> T) -> T { body(&sequencer) }

    /// Runs `body` on the counters where they are stored, in one access.
    @inline(__always)
    private func withMetrics(_ body: (inout AuthorityMetrics) -> Void) { body(&metrics) }

    /// Runs `body` on the client ledger where it is stored (see ``inSequencer(_:)``).
    @inline(__always)
    private func withLedger<T>(_ body: (inout ClientLedger) -> T) -> T { body(&clients) }

    /// Runs `body` on the dispatcher where it is stored: a method called on the stored property
    /// itself ran on a copy of the whole dispatcher (its tables retained and released), per job.
    @inline(__always)
    private func withDispatcher<T>(_ body: (inout Dispatcher) -> T) -> T { body(&dispatcher) }

    /// Counts an action whose last job ended (the sequencer says which) as applied, and frees
    /// its client's in-flight slot.
    private func completeAction(_ actionSeq: UInt64) {
        guard let client = actionClients.removeValue(for: actionSeq) else { return }
        metrics[.actionsApplied] += 1
        inFlight.remove(client)
    }

    // MARK: Time

    /// Heartbeats to workers, dead workers, job timeouts.
    package func tick(now: UInt64, sendHeartbeats: Bool) {
        let expiry = dispatcher.tick(now: now)
        for peer in expiry.deadWorkers {
            jobBatchReaders[peer] = nil
            metrics[.workersLost] += 1
            logger.warning("worker \(expiry.deadWorkerNames[peer].map { "\($0) " } ?? "")(\(peer)) missed \(configuration.missedHeartbeats) heartbeats: considered dead")
        }
        for peer in expiry.quarantined {
            metrics[.workersQuarantined] += 1
            let health = dispatcher.workers[peer]?.health
            var until: UInt64 = now
            if case .quarantined(let end)? = health?.state { until = end }
            logger.warning("worker \(workerLabel(peer)) quarantined: \(health?.consecutiveTimeouts ?? 0) job timeout(s) in a row; its jobs go to other workers, none for it for \(until - now) ms, then one at a time on probation")
        }
        for peer in expiry.onProbation {
            logger.notice("worker \(workerLabel(peer)) on probation: one job at a time until one ends in time")
        }
        if expiry.timedOut > 0 { metrics[.jobsTimedOut] += UInt64(expiry.timedOut) }
        if !expiry.requeued.isEmpty {
            metrics[.jobsRedispatched] += UInt64(expiry.requeued.count)
            logger.info("re-dispatching \(expiry.requeued.count) job(s)")
        }
        for assignment in expiry.assignments { send(assignment) }
        if sendHeartbeats {
            let heartbeat = AuthorityToWorker.heartbeat(features: AuthorityFeature.all).frames(writer)
            for peer in dispatcher.workerIDs { outbox.promptToWorkers.append([peer.bytes] + heartbeat) }
        }
    }

    // MARK: Recovery

    /// Re-applies one journal record (no replies, no dispatch) and returns the mutations it
    /// applied, in order: for tools that show or rebuild each version. `migrated` replaces the
    /// record's action or mutation bytes for decoding when they were stored at an older schema
    /// version (the client ledger keeps the bytes the client sent). Without `collectingApplied`
    /// it is ``replayQuietly(_:migrated:)`` and returns none.
    @discardableResult
    package func replay(_ record: AuthorityRecord, migrated: [UInt8]? = nil, collectingApplied: Bool = false) throws -> [AppliedMutation<R.Mutation>] {
        guard collectingApplied else {
            try replayQuietly(record, migrated: migrated)
            return []
        }
        replaying = .collectingApplied
        defer {
            replaying = nil
            outbox = Outbox()
        }
        try reapply(record, migrated: migrated)
        return outbox.appliedMutations
    }

    /// Re-applies one journal record and keeps nothing it produced: recovery and a standby replay
    /// every record and publish nothing. Returns nothing, not an empty array: in this code, not
    /// specialised for the reactor, even an empty `[AppliedMutation<R.Mutation>]` asks the
    /// runtime for its type, per record.
    package func replayQuietly(_ record: AuthorityRecord, migrated: [UInt8]? = nil) throws {
        replaying = .discardingApplied
        defer { replaying = nil }
        try reapply(record, migrated: migrated)
        // Replies, worker messages and records of a replay go nowhere. Nothing was queued for
        // the feed (`queuesApplied` is false), so only the outbox's messages are looked at:
        // asking whether its generic `applied` is empty asked the runtime for three types.
        if outbox.hasMessages { outbox = Outbox() }
    }

    private func reapply(_ record: AuthorityRecord, migrated: [UInt8]?) throws {
        switch record {
        case .accepted(let client, let seq, let payload):
            let action = try decoder.decode(R.Action.self, from: migrated ?? payload)
            accept(action, client: client, seq: seq, payload: payload, now: 0, dispatch: false)
        case .emitted(let job, let index, let payload):
            let mutation = try decoder.decode(R.Mutation.self, from: migrated ?? payload)
            absorb(try R._sequencerApply(job: job, emitIndex: index, mutation: mutation, in: &sequencer, collecting: queuesApplied,
                                         into: &outbox.appliedMutations), firstPayload: nil)
        case .completed(let job, let count):
            absorb(try R._sequencerComplete(job: job, emitCount: count, in: &sequencer, collecting: queuesApplied, into: &outbox.appliedMutations),
                   firstPayload: nil)
        case .failed(let job, let failure):
            absorb(try Self.fail(job, failure, in: &sequencer, collecting: queuesApplied, into: &outbox.appliedMutations), firstPayload: nil)
        case .schema:
            break
        case .started:
            absorbStart()
        case .subscriptionEvent(let run, let index, let payload):
            try replaySubscriptionEvent(run: run, index: index, payload: migrated ?? payload)
        }
    }

    /// The durable snapshot of everything this engine knows.
    package func checkpoint() -> AuthorityCheckpoint<R> {
        AuthorityCheckpoint(app: configuration.appName, sequencer: sequencer.checkpoint(), clients: clients, actionClients: actionClients.entries,
                            schema: configuration.schema.version)
    }

    /// Restores from a durable snapshot.
    package func restore(_ checkpoint: AuthorityCheckpoint<R>) {
        encodedStateCache = nil
        // An encoding under way is of the state before: its requesters ask again after their timeout.
        stateEncoding = nil
        sequencer = Sequencer(reactor: sequencer.reactor, restoring: checkpoint.sequencer)
        clients = checkpoint.clients
        clients.apply(configuration.clientLedger)
        actionClients = SequenceWindow(checkpoint.actionClients)
        inFlight.removeAll()
        for client in checkpoint.actionClients.values { inFlight.add(client) }
    }

    /// Queues every job that has not been reported (after recovery).
    package func dispatchUnreportedJobs(now: UInt64) -> Int {
        let jobs = sequencer.unreportedJobs
        for job in jobs {
            if let assignment = dispatcher.enqueue(job.id, kind: job.kind, now: now) { send(assignment) }
        }
        return jobs.count
    }

    // MARK: Transforms

    /// Applies the reactor's initial mutations and actions if the recovered state is fresh
    /// (nothing accepted yet: a new data directory, or none), journaling a `started` record;
    /// their jobs are dispatched with the other unreported ones. Returns whether it applied them.
    @discardableResult
    package func startIfFresh() -> Bool {
        guard absorbStart() else { return false }
        if isJournaling { outbox.records.append(.started) }
        return true
    }

    /// Runs `Sequencer.start()` and counts what it applied, as for an accepted action.
    @discardableResult
    private func absorbStart() -> Bool {
        guard let acceptance = sequencer.start() else { return false }
        countSyncAcceptance(acceptance)
        return true
    }

    /// Counts the acceptance of the start or of a subscription event as an accepted action,
    /// applied now when it has no jobs, and queues its mutations for the feed. Its mutations count
    /// as sync ones, unless `byOrigin`: an event that cancelled jobs, whose mutations (its own and
    /// the cancelled jobs' hooks) ``absorbCancellations(_:now:)`` counts by origin.
    func countSyncAcceptance(_ acceptance: Acceptance<R.Mutation, R.Effect>, byOrigin: Bool = false) {
        metrics[.actionsAccepted] += 1
        metrics[.mutationsApplied] += UInt64(acceptance.appliedCount)
        if !byOrigin { metrics[.mutationsSync] += UInt64(acceptance.appliedCount) }
        queueForFeed(acceptance.applied)
        if acceptance.jobCount == 0 { metrics[.actionsApplied] += 1 }
    }

    /// Whether the outbox carries job events (the feed has subscribers to topic `job`): set by
    /// the loop; turning it off forgets what was watched.
    package var followsJobs: Bool {
        get { jobWatch.isOn }
        set { if newValue != jobWatch.isOn { jobWatch.isOn = newValue } }
    }

    /// Records a job event when someone follows them.
    private func noteJob(_ make: (inout JobWatch) -> JobEvent) {
        guard jobWatch.isOn else { return }
        outbox.jobEvents.append(make(&jobWatch))
    }

    /// The names of the reactor's projections (none for most apps: then nothing is computed).
    package var projectionNames: [String] { projectionFeed.names }

    // MARK: Output

    /// Counters with current gauges.
    package func currentMetrics() -> AuthorityMetrics {
        var snapshot = metrics
        // One access to the sequencer where it is stored (see ``inSequencer(_:)``): each read of
        // a property through the stored value copied the whole sequencer, every turn.
        let (version, actionSeq, openJobs, subscriptions) = inSequencer { ($0.version, $0.actionSeq, $0.openJobCount, $0.runningSubscriptionCount) }
        snapshot.version = version
        snapshot.actionSeq = actionSeq
        snapshot.openJobs = UInt64(openJobs)
        // Likewise the dispatcher and the ledger: read through the stored values, they were
        // copied whole (with their tables' reference counts), every turn.
        let (workers, queued, quarantined) = withDispatcher { ($0.workerCount, $0.queuedCount, $0.quarantinedCount) }
        let (clientCount, forgotten) = withLedger { ($0.clientCount, $0.forgottenCount) }
        snapshot.workers = UInt64(workers)
        snapshot.queuedJobs = UInt64(queued)
        snapshot.clients = UInt64(clientCount)
        snapshot.forgottenClients = UInt64(forgotten)
        snapshot.quarantinedWorkers = UInt64(quarantined)
        snapshot.subscriptionsRunning = UInt64(subscriptions)
        snapshot.subscriptionsUnassigned = subscriptions > 0 ? UInt64(unassignedSubscriptionCount) : 0
        return snapshot
    }

    /// Takes what the batch produced, with what `demand` asks for the feed and the journal.
    package func takeOutbox(_ demand: Outbox.Demand = Outbox.Demand()) -> Outbox {
        placeSubscriptions()
        let (version, actionSeq) = inSequencer { ($0.version, $0.actionSeq) }
        outbox.version = version
        outbox.actionSeq = actionSeq
        if demand.mutations {
            for index in 0 ..< outbox.appliedPayloads.count where outbox.appliedPayloads[index] == nil {
                outbox.appliedPayloads[index] = encode(outbox.appliedMutations[index].mutation)
            }
        }
        settleElsewhereEncoding(at: version)
        switch feedState(demand) {
        case .encoded(let bytes, let nanoseconds):
            outbox.state = bytes
            outbox.stateEncodeNanoseconds = nanoseconds
        case .encoding(let encoding):
            outbox.stateEncoding = encoding
        case nil:
            break
        }
        outbox.encodeElsewhere = elsewhereEncodingToArrange()
        if !demand.projections.isEmpty || projectionFeed.remembersAny {
            outbox.projections = projectionFeed.changes(of: sequencer.state, version: version, wanted: demand.projections) { encode($0) }
        }
        if let threshold = demand.checkpointAtRecords, outbox.records.count >= threshold {
            outbox.checkpoint = checkpoint()
        }
        if !outbox.jobBatches.isEmpty { outbox.jobBatches.pack(into: &outbox.toWorkers, writer: writer) }
        if !outbox.ackBatches.isEmpty { outbox.ackBatches.pack(into: &outbox.replies) }
        // Moved out, not copied and then replaced.
        var taken = Outbox()
        swap(&taken, &outbox)
        return taken
    }

    /// Counts what the loop saw while carrying out outboxes.
    package func absorb(_ report: AuthorityLoopReport) {
        // Only counters that moved are written: most turns report none, and a write would copy
        // the counters' storage, shared with the copy last published to other threads.
        count(.journalRecords, report.journalRecords)
        count(.journalCommits, report.journalCommits)
        count(.snapshotsWritten, report.snapshotsWritten)
        count(.snapshotsPublished, report.snapshotsPublished)
        count(.handshakesRefused, report.handshakesRefused)
        count(.repliesRefusedBytes, report.repliesRefusedBytes)
        count(.acks, report.acks)
        count(.ackBatches, report.ackBatches)
        count(.actionsBytesReceived, report.actionsBytesReceived)
        count(.actionsBytesSent, report.actionsBytesSent)
        count(.workersBytesReceived, report.workersBytesReceived)
        count(.workersBytesSent, report.workersBytesSent)
        count(.feedBytesSent, report.feedBytesSent)
        count(.journalBytes, report.journalBytes)
        count(.journalFsyncs, report.journalFsyncs)
        count(.snapshotBytesWritten, report.snapshotBytesWritten)
        count(.replicationRecordsSent, report.replicationRecordsSent)
        count(.replicationBytesSent, report.replicationBytesSent)
        if let standbys = report.standbys { metrics.standbys = standbys }
        if let lag = report.replicationLag { metrics.replicationLag = lag }
        if let lsn = report.journalLSN { metrics.journalLSN = lsn }
        if let mark = report.feedHighWaterMark { metrics.feedHighWaterMark = mark }
        if let observers = report.observers { metrics.observers = observers }
        if let bytes = report.lastSnapshotBytes { metrics.snapshotBytes = bytes }
        if let replica = report.snapshotReplica {
            metrics.snapshotReplica = replica.running ? 1 : 0
            metrics.snapshotReplicaBacklogBytes = replica.backlogBytes
        }
        if report.ackLatency.count > 0 { metrics.ackLatency.merge(report.ackLatency) }
        if report.journalFsyncLatency.count > 0 { metrics.journalFsyncLatency.merge(report.journalFsyncLatency) }
        if report.snapshotWriteDuration.count > 0 { metrics.snapshotWriteDuration.merge(report.snapshotWriteDuration) }
    }

    private func count(_ counter: AuthorityCounter, _ amount: UInt64) {
        if amount > 0 { metrics[counter] += amount }
    }

    /// Encodes an app value for the wire; `nil` (and an error log) if the app's type cannot.
    func encode<T: Encodable>(_ value: T) -> [UInt8]? {
        do {
            return try encoder.encode(value)
        } catch {
            logger.error("cannot encode \(T.self): \(error)")
            return nil
        }
    }

    func send(_ assignment: Dispatcher.Assignment) {
        // The dispatcher keeps the kind of every job it gives out (worked out, by reflection by
        // default, when the job was accepted), and every assignment is of a job it gave out.
        guard let kind = withDispatcher({ $0.kind(ofAssigned: assignment.job) }) else { return }
        // Through the witness that hands the effect over: one returning it as an optional made
        // this code look up `Optional<Effect>` at run time, per job.
        // No payload: the job is not open, or its effect did not encode (logged).
        var payload: [UInt8]?
        inSequencer { R._sequencerVisitOpenEffect(assignment.job, in: $0) { payload = encode($0) } }
        guard let payload else { return }
        metrics[.jobsDispatched] += 1
        noteJob { $0.dispatched(assignment.job, to: dispatcher.name(of: assignment.worker)) }
        if !jobBatchReaders.isEmpty, let limit = jobBatchReaders[assignment.worker] {
            outbox.jobBatches.add(JobBatch.Entry(job: assignment.job, kind: kind, payload: payload), for: assignment.worker, limit: limit,
                                  in: &outbox.toWorkers)
        } else {
            toWorker(assignment.worker, .job(assignment.job, kind: kind, payload: payload))
        }
    }

    /// Queues an ack (counted in the outbox: the loop reports how long acks waited).
    private func sendAck(_ envelope: Envelope, clientSeq: UInt64, actionSeq: UInt64, version: UInt64) {
        outbox.acks += 1
        guard envelope.count == 1, let routingID = envelope.first else {
            outbox.replies.append(.frames(AuthorityReply.ack(clientSeq: clientSeq, actionSeq: actionSeq, version: version).frames(writer, after: envelope)))
            return
        }
        if !ackBatchReaders.isEmpty, ackBatchReaders.contains(routingID) {
            outbox.ackBatches.add(AckBatch.Entry(clientSeq: clientSeq, actionSeq: actionSeq, version: version), for: routingID, in: &outbox.replies)
            return
        }
        outbox.replies.append(.ack(routingID: routingID, clientSeq: clientSeq, actionSeq: actionSeq, version: version))
    }

    /// Queues a reply; `request` marks one that answers a request and may be refused for size.
    func reply(_ envelope: Envelope, _ message: AuthorityReply, request: UInt64? = nil) {
        queue(.frames(message.frames(writer, after: envelope)), to: envelope, request: request)
    }

    func queue(_ queued: QueuedReply, to envelope: Envelope, request: UInt64?) {
        if !outbox.ackBatches.isEmpty, let routingID = envelope.first { outbox.ackBatches.close(routingID) }
        if let request {
            outbox.requestReplies[outbox.replies.count] = Outbox.RequestReply(requestID: request, envelopeCount: envelope.count)
        }
        outbox.replies.append(queued)
    }

    func toWorker(_ peer: PeerID, _ message: AuthorityToWorker) {
        outbox.jobBatches.close(peer)
        outbox.toWorkers.append([peer.bytes] + message.frames(writer))
    }

    /// Why a peer of schema version `peer` may not join a node of `own`, in words for both sides.
    static func schemaRefusal(app: String, peer: UInt32, own: AppSchema) -> String {
        let compatible = own.compatibleVersions.isEmpty ? "" : " (compatible: \(own.compatibleVersions.sorted().map(String.init).joined(separator: ", ")))"
        return "this authority runs \(app) schema version \(own.version)\(compatible), the worker speaks version \(peer): "
            + "deploy workers of the same release, or list \(peer) in the app's AppSchema.compatibleVersions if its values decode both ways"
    }

    /// How log lines name a worker: its announced name and its routing id.
    func workerLabel(_ peer: PeerID) -> String { dispatcher.name(of: peer).map { "\($0) (\(peer))" } ?? "(\(peer))" }

    private func count(_ error: ProtocolError) {
        switch error.code {
        case .unsupportedVersion: metrics[.unsupportedVersion] += 1
        case .unknownKind: metrics[.unknownKind] += 1
        default: metrics[.malformed] += 1
        }
    }

    /// A ROUTER message's routing envelope (id, plus the empty delimiter a REQ peer sends): a
    /// slice of the message as received, so that reading one builds no arrays of its own.
    typealias Envelope = ArraySlice<[UInt8]>

    /// Splits a ROUTER message into its routing envelope and the body.
    static func split(_ frames: [[UInt8]]) -> (envelope: Envelope, body: ArraySlice<[UInt8]>)? {
        guard frames.count >= 2 else { return nil }
        let envelopeCount = frames[1].isEmpty ? 2 : 1
        guard frames.count > envelopeCount else { return nil }
        return (frames[..<envelopeCount], frames[envelopeCount...])
    }
}
