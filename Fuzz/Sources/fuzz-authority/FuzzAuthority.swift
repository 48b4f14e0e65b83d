import FuzzSupport
import MessagePack
import ReactorApps
import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire

// Fuzzes the authority's message handling without sockets: `AuthorityEngine` gets frames exactly
// as the loop would hand them over from its two ROUTER sockets, plus clock ticks.
//
// An input is a small script (see `Script` and `Step`): byte 0 picks the app and limits, then each
// step is a raw client or worker message (frames taken from the input as they are, so msgpack
// headers are fuzzed), a well-formed action, request, `ready` or job report built from a few bytes
// (so that the fuzzer reaches deep states: registered workers, running and re-dispatched jobs,
// buffered emits, duplicates), or a tick of the clock. After every step it checks:
//  - nothing traps; everything the engine sends parses as protocol (replies to the sender's
//    envelope only, at most one per message);
//  - version and action_seq never decrease; applied mutations are numbered consecutively;
//  - a refused message (error reply, or dropped) changes nothing and is counted under its code;
//  - an ack is either new (action_seq + 1, version as after its sync mutations) or the same ack as
//    the first time for that (client_id, client_seq): nothing is applied twice;
//  - each job's mutations are applied once each, in emit order; ticks apply nothing;
//  - snapshot, pong and stats replies report the current version and state;
//  - Counter: the count equals the version, and equals the sync increases of accepted `countUp`s
//    plus the async increases applied;
// and at the end that replaying the journal records, and restoring an encoded checkpoint, both
// rebuild the same state, version and action_seq.

// MARK: Input

/// Reads the input front to back; past the end every byte reads as 0.
struct Script {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + count)
        defer { offset = end }
        return Array(bytes[offset ..< end])
    }

    /// A length byte, then that many bytes.
    mutating func frame() -> [UInt8] { take(Int(byte())) }
}

/// The steps of a script: the low 3 bits of a step's first byte.
enum Step: UInt8 {
    /// peer (1), delimiter flag (1), frame count (1), frames (length byte + bytes each).
    case rawClient = 0
    /// peer (1), frame count (1), frames.
    case rawWorker = 1
    /// client (1), seq selector (1), action selector (1) [, raw payload frame].
    case action = 2
    /// kind (1), request id (1).
    case request = 3
    /// peer (1), flags (1): capacity, kinds, wrong app.
    case ready = 4
    /// peer (1), what (1), job selector (1), index (1) [, raw payload frame]. `what % 6` picks emit
    /// (0, 1), done (2; with its last mutation when bit 0x40 is set), failed, heartbeat or bye.
    case report = 5
    /// milliseconds / 50 (1), heartbeats flag in the top bit; 0xff restarts the authority instead
    /// (a new engine restored from an encoded checkpoint, as after a crash with a snapshot).
    case tick = 6
    /// the same as rawClient or rawWorker, but with exactly one header frame (+ optional payload).
    case rawHeader = 7
}

// MARK: Apps

/// What the harness needs to know about an app to build well-formed messages and check its state.
protocol FuzzApp: Reactor where Action: Equatable, State: Equatable {
    init()
    static var name: String { get }
    static func action(_ selector: UInt8) -> Action
    static func mutation(_ selector: UInt8) -> Mutation
    /// Sync mutations applied when accepting `action` (`nil`: not known statically).
    static func syncCount(of action: Action) -> Int?
    /// A number that each applied mutation adds to (`tally(of:)`) and that the state shows
    /// (`tally(in:)`): the state must be what the applied mutations imply.
    static func tally(of mutation: Mutation) -> Int
    static func tally(in state: State) -> Int
}

extension Counter: FuzzApp {
    static var name: String { "counter" }
    static func action(_ selector: UInt8) -> Action { selector & 1 == 0 ? .countUp : .countUpAsync }
    static func mutation(_ selector: UInt8) -> Mutation { .increase }
    static func syncCount(of action: Action) -> Int? { action == .countUp ? 1 : 0 }
    static func tally(of mutation: Mutation) -> Int { 1 }
    static func tally(in state: State) -> Int { state.count }
}

extension Primes: FuzzApp {
    static var name: String { "primes" }
    static func action(_ selector: UInt8) -> Action {
        selector & 1 == 0 ? .factor(n: UInt64(selector >> 1)) : .factorInOrder(n: UInt64(selector >> 1), delayMs: 0)
    }
    static func mutation(_ selector: UInt8) -> Mutation {
        let n = UInt64(selector >> 2)
        switch selector & 3 {
        case 0: return .requested(n: n)
        case 1: return .prime(n: n, factor: 2)
        case 2: return .finished(n: n)
        default: return .failed(n: n, reason: "fuzz")
        }
    }
    static func syncCount(of action: Action) -> Int? { 1 }
    static func tally(of mutation: Mutation) -> Int {
        if case .requested = mutation { 1 } else { 0 }
    }
    static func tally(in state: State) -> Int { state.requested }
}

// MARK: Model

/// What the harness knows independently of the engine.
struct Model {
    var version: UInt64 = 0
    var actionSeq: UInt64 = 0
    /// The first ack of every (client_id, client_seq).
    var acks: [String: [UInt64: (actionSeq: UInt64, version: UInt64, payload: [UInt8])]] = [:]
    /// Each client's accepted `client_seq`s, in the order they were accepted.
    var accepted: [String: [UInt64]] = [:]
    var actionsAccepted = 0
    /// Mutations applied, by origin.
    var syncApplied: UInt64 = 0
    var asyncApplied: UInt64 = 0
    var failureApplied: UInt64 = 0
    /// The sum of `FuzzApp.tally(of:)` over every applied mutation.
    var tally = 0
    /// The next emit index to be applied, per job.
    var nextEmit: [JobID: UInt32] = [:]
    /// Jobs the engine assigned, newest last, and to whom.
    var jobs: [(job: JobID, worker: [UInt8])] = []
    var records: [AuthorityRecord] = []

    /// Whether the ack (and payload fingerprint) of `seq` is among the last ones the authority
    /// remembers for `client` (`--remembered-acks`, 8 by default).
    func isRemembered(_ seq: UInt64, of client: String) -> Bool {
        accepted[client, default: []].suffix(ClientLedgerLimits().rememberedAcks).contains(seq)
    }
}

let refusalCounters: [AuthorityCounter] = [.malformed, .unsupportedVersion, .unknownKind, .badActions, .actionsBusy, .actionsStale, .actionsConflict, .actionsUnknownClient]

func refusals(_ metrics: AuthorityMetrics) -> UInt64 { refusalCounters.reduce(0) { $0 + metrics[$1] } }

func counter(for code: ErrorCode) -> AuthorityCounter? {
    switch code {
    case .malformed: .malformed
    case .unsupportedVersion: .unsupportedVersion
    case .unknownKind: .unknownKind
    case .badAction: .badActions
    case .busy: .actionsBusy
    case .stale: .actionsStale
    case .conflict: .actionsConflict
    case .unknownClient: .actionsUnknownClient
    case .tooLarge: .messagesTooLarge
    case .unknownWorker, .wrongApp, .unavailable, .expired: nil
    }
}

func header(_ kind: String, _ fields: [MessagePackValue]) -> [UInt8] {
    MessagePackValue.array([.uint(1), .string(kind)] + fields).pack()
}

// MARK: Harness

final class Harness<R: FuzzApp> {
    private(set) var engine: AuthorityEngine<R>
    let maxInFlight: Int
    var model = Model()
    var now: UInt64 = 1
    let encoder = MessagePackEncoder()
    let decoder = MessagePackDecoder()
    let clients = ["c0", "c1", "c2"]
    let workers: [[UInt8]] = [[0x77, 0], [0x77, 1], [0x77, 2], [0x77, 3]]

    static func makeEngine(maxInFlight: Int) -> AuthorityEngine<R> {
        var configuration = AuthorityConfiguration(appName: R.name, actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.maxInFlightPerClient = maxInFlight
        configuration.jobTimeout = .seconds(5)
        return AuthorityEngine(reactor: R(), configuration: configuration, logger: Logger(label: "fuzz", level: .error, sink: .discard), journaling: true)
    }

    init(maxInFlight: Int) {
        self.maxInFlight = maxInFlight
        engine = Self.makeEngine(maxInFlight: maxInFlight)
    }

    func run(_ script: inout Script) {
        var steps = 0
        while !script.isAtEnd, steps < 256 {
            steps += 1
            guard let step = Step(rawValue: script.byte() & 7) else { continue }
            perform(step, &script)
        }
        finish()
        if fuzzVerbose {
            let metrics = engine.currentMetrics().dictionary.filter { $0.value > 0 }.sorted { $0.key < $1.key }
            print("  \(R.name): \(steps) steps, \(model.records.count) journal records; " + metrics.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
    }

    // MARK: Steps

    func perform(_ step: Step, _ script: inout Script) {
        switch step {
        case .rawClient:
            var envelope = [[0x63, script.byte() & 3]]
            if script.byte() & 1 == 1 { envelope.append([]) }
            let count = Int(script.byte() % 4)
            var frames: [[UInt8]] = []
            for _ in 0 ..< count { frames.append(script.frame()) }
            client(envelope + frames)
        case .rawWorker:
            let peer = workers[Int(script.byte() % 4)]
            let count = Int(script.byte() % 4)
            var frames: [[UInt8]] = []
            for _ in 0 ..< count { frames.append(script.frame()) }
            worker([peer] + frames)
        case .rawHeader:
            let toWorker = script.byte() & 1 == 1
            var frames = [script.frame()]
            if script.byte() & 1 == 1 { frames.append(script.frame()) }
            if toWorker { worker([workers[0]] + frames) } else { client([[0x63, 0]] + frames) }
        case .action:
            let clientID = clients[Int(script.byte() % 3)]
            let selector = script.byte()
            // Mostly small sequence numbers (resends), sometimes far ahead (to make old ones stale).
            let seq: UInt64 = selector & 0x80 == 0 ? UInt64(selector & 0x0f) + 1 : UInt64(selector & 0x7f) << 12
            let actionSelector = script.byte()
            let payload: [UInt8]
            if actionSelector == 0xff {
                payload = script.frame()
            } else {
                guard let encoded = try? encoder.encode(R.action(actionSelector)) else { fuzzFailure("cannot encode an action") }
                payload = encoded
            }
            client([[0x63, 1]] + [header("action", [.string(clientID), .uint(seq)]), payload])
        case .request:
            let kinds = ["snapshot", "ping", "stats"]
            let kind = script.byte()
            if kind >= 0xf0 {
                // The features request, naming `acks` or not (a script byte's low bit).
                client([[0x63, 2]] + [header("features", [.uint(UInt64(script.byte())), .array(kind & 1 == 0 ? [.string("acks")] : [])])])
            } else {
                client([[0x63, 2]] + [header(kinds[Int(kind % 3)], [.uint(UInt64(script.byte()))])])
            }
        case .ready:
            let peer = workers[Int(script.byte() % 4)]
            let flags = script.byte()
            let app = flags & 0x80 == 0 ? R.name : "other"
            let kinds: [MessagePackValue] = flags & 0x40 == 0 ? [] : [.string("slowIncrease"), .string("factorize")].prefix(Int(flags >> 4 & 1) + 1).map { $0 }
            worker([peer, header("ready", [.string("w\(peer[1])"), .string(app), .uint(UInt64(flags & 3) + 1), .array(kinds)])])
        case .report:
            let peerByte = script.byte()
            let what = script.byte()
            let jobSelector = script.byte()
            let index = UInt32(script.byte())
            // A job the engine assigned (and its worker, unless the peer byte says otherwise), or a made-up one.
            var job = JobID(actionSeq: UInt64(jobSelector), effectIndex: 0)
            var peer = workers[Int(peerByte % 4)]
            if !model.jobs.isEmpty, jobSelector & 0x80 == 0 {
                let assigned = model.jobs[model.jobs.count - 1 - Int(jobSelector) % model.jobs.count]
                job = assigned.job
                if peerByte & 0x80 == 0 { peer = assigned.worker }
            }
            let fields: [MessagePackValue] = [.uint(job.actionSeq), .uint(UInt64(job.effectIndex))]
            switch what % 6 {
            case 0, 1:
                worker([peer, header("emit", fields + [.uint(UInt64(index % 8))]), mutationPayload(what, &script)])
            case 2 where what & 0x40 != 0:
                // A done that carries the job's last mutation (index % 8 counts it, so 0 is malformed).
                worker([peer, header("done", fields + [.uint(UInt64(index % 8))]), mutationPayload(what, &script)])
            case 2: worker([peer, header("done", fields + [.uint(UInt64(index % 8))])])
            case 3: worker([peer, header("failed", fields + [.uint(UInt64(index)), .string("fuzz")])])
            case 4: worker([peer, header("heartbeat", [])])
            default: worker([peer, header("bye", [])])
            }
        case .tick:
            let amount = script.byte()
            if amount == 0xff {
                restart()
                return
            }
            now += UInt64(amount & 0x7f) * 50
            let before = snapshot()
            engine.tick(now: now, sendHeartbeats: amount & 0x80 != 0)
            let outbox = engine.takeOutbox()
            fuzzCheck(outbox.replies.isEmpty && outbox.promptReplies.isEmpty && outbox.applied.isEmpty && outbox.records.isEmpty,
                      "a tick replied to a client or applied something")
            fuzzCheck(snapshot() == before, "a tick changed the state")
            workerOutput(outbox.promptToWorkers + outbox.toWorkers)
        }
    }

    /// A report's mutation payload: a well-formed mutation picked by `what >> 3`, or (top bit set)
    /// a raw frame from the script.
    func mutationPayload(_ what: UInt8, _ script: inout Script) -> [UInt8] {
        guard what & 0x80 == 0 else { return script.frame() }
        guard let encoded = try? encoder.encode(R.mutation(what >> 3)) else { fuzzFailure("cannot encode a mutation") }
        return encoded
    }

    // MARK: One message

    struct Observed: Equatable {
        var version: UInt64
        var actionSeq: UInt64
        var state: [UInt8]
    }

    func snapshot() -> Observed {
        guard let state = try? encoder.encode(engine.sequencer.state) else { fuzzFailure("the state does not encode") }
        return Observed(version: engine.sequencer.version, actionSeq: engine.sequencer.actionSeq, state: state)
    }

    /// Envelope and body as the engine splits them (nil: the engine must drop the message).
    func split(_ frames: [[UInt8]]) -> (envelope: [[UInt8]], body: [[UInt8]])? {
        guard frames.count >= 2 else { return nil }
        if frames[1].isEmpty {
            guard frames.count >= 3 else { return nil }
            return (Array(frames[0 ... 1]), Array(frames[2...]))
        }
        return ([frames[0]], Array(frames[1...]))
    }

    func client(_ frames: [[UInt8]]) {
        let before = snapshot()
        let metricsBefore = engine.metrics
        now += 1
        engine.handleClient(frames, now: now)
        let outbox = engine.takeOutbox()
        let after = snapshot()
        let request = split(frames).flatMap { try? ClientMessage(frames: $0.body) }

        let replies = outbox.promptReplies + outbox.replies.map { $0.frames(HeaderWriter()) }
        fuzzCheck(replies.count <= 1, "\(replies.count) replies to one client message")
        guard let replyFrames = replies.first else {
            fuzzCheck(split(frames) == nil, "no reply to a client message with an envelope")
            fuzzCheck(after == before, "a dropped client message changed the state")
            fuzzCheck(engine.metrics[.malformed] == metricsBefore[.malformed] + 1, "a dropped client message was not counted as malformed")
            return
        }
        guard let (envelope, _) = split(frames), replyFrames.count > envelope.count,
              Array(replyFrames.prefix(envelope.count)) == envelope else {
            fuzzFailure("a reply is not addressed to the sender's envelope")
        }
        let reply: AuthorityReply
        do {
            reply = try AuthorityReply(frames: Array(replyFrames.dropFirst(envelope.count)))
        } catch {
            fuzzFailure("the authority's reply does not parse: \(error)")
        }
        checkAppliedAndJobs(outbox, before: before, after: after, fromWorker: false)
        workerOutput(outbox.toWorkers)

        switch reply {
        case .error(_, let code, _):
            fuzzCheck(after == before && outbox.applied.isEmpty, "a refused client message (\(code)) changed the state")
            fuzzCheck(refusals(engine.metrics) == refusals(metricsBefore) + 1, "a refused client message (\(code)) was not counted once")
            if let counter = counter(for: code) {
                fuzzCheck(engine.metrics[counter] == metricsBefore[counter] + 1, "error \(code) not counted as \(counter)")
            } else {
                fuzzFailure("error code \(code) on the actions socket")
            }
            if case .action(let clientID, let seq, let payload) = request {
                fuzzCheck(code == .stale || code == .busy || code == .badAction || code == .conflict, "a well-formed action \(clientID)/\(seq) was refused as \(code)")
                if code == .conflict {
                    let first = model.acks[clientID]?[seq]
                    fuzzCheck(first != nil && first?.payload != payload, "action \(clientID)/\(seq) refused as a conflict, but it was \(first == nil ? "never accepted" : "accepted with the same payload")")
                    fuzzCheck(model.isRemembered(seq, of: clientID), "action \(clientID)/\(seq) refused as a conflict, but its payload is no longer remembered")
                } else {
                    fuzzCheck(code == .stale || model.acks[clientID]?[seq] == nil, "a resend of accepted action \(clientID)/\(seq) was refused as \(code)")
                }
                if code == .badAction {
                    fuzzCheck((try? decoder.decode(R.Action.self, from: payload)) == nil, "an action that decodes was refused as bad_action")
                }
            }
        case .ack(let clientSeq, let actionSeq, let version):
            guard case .action(let clientID, let seq, let payload) = request, seq == clientSeq else {
                fuzzFailure("an ack that does not answer an action: \(reply)")
            }
            if let first = model.acks[clientID]?[seq] {
                fuzzCheck(after == before, "a resent action \(clientID)/\(seq) changed the state")
                // One of the client's last remembered acks is answered with it, and only with the
                // same payload; an older one with action_seq 0 and the current version, its
                // payload not compared (its fingerprint is gone: docs/PROTOCOL.md).
                if model.isRemembered(seq, of: clientID) {
                    fuzzCheck(payload == first.payload, "a resend of \(clientID)/\(seq) with another payload was acked, not refused as a conflict")
                    fuzzCheck(actionSeq == first.actionSeq && version == first.version,
                              "resent action \(clientID)/\(seq) acked as \(actionSeq)/\(version), first as \(first.actionSeq)/\(first.version)")
                } else {
                    fuzzCheck(actionSeq == 0 && version == after.version,
                              "resent action \(clientID)/\(seq), no longer remembered, acked as \(actionSeq)/\(version), first as \(first.actionSeq)/\(first.version)")
                }
                fuzzCheck(engine.metrics[.actionsDuplicate] == metricsBefore[.actionsDuplicate] + 1, "a duplicate action was not counted")
            } else {
                fuzzCheck(after.actionSeq == before.actionSeq + 1 && actionSeq == after.actionSeq, "a new action was not given the next action_seq")
                fuzzCheck(version == after.version, "an ack reports version \(version), the engine is at \(after.version)")
                fuzzCheck(engine.metrics[.actionsAccepted] == metricsBefore[.actionsAccepted] + 1, "an accepted action was not counted")
                guard let action = try? decoder.decode(R.Action.self, from: payload) else { fuzzFailure("acked an action that does not decode") }
                if let sync = R.syncCount(of: action) {
                    fuzzCheck(outbox.applied.count == sync, "accepting \(action) applied \(outbox.applied.count) mutations, expected \(sync)")
                }
                model.acks[clientID, default: [:]][seq] = (actionSeq, version, payload)
                model.accepted[clientID, default: []].append(seq)
                model.actionsAccepted += 1
            }
        case .snapshot(_, let version, let actionSeq, let app, let payload):
            fuzzCheck(after == before, "a snapshot request changed the state")
            fuzzCheck(version == after.version && actionSeq == after.actionSeq && app == R.name, "snapshot reply at \(version)/\(actionSeq)")
            guard let state = try? decoder.decode(R.State.self, from: payload) else { fuzzFailure("the snapshot payload does not decode") }
            fuzzCheck(state == engine.sequencer.state, "the snapshot payload is not the current state")
        case .pong(_, let version, _, _, _, _, _):
            fuzzCheck(after == before && version == after.version, "pong at version \(version), engine at \(after.version)")
        case .stats(_, let counters):
            fuzzCheck(after == before && counters["version"] == after.version, "stats report version \(counters["version"] ?? 0), engine at \(after.version)")
        case .snapshotChunk(_, _, _, let app, let total, let offset, let payload):
            fuzzCheck(after == before && app == R.name && offset + UInt64(payload.count) <= total, "snapshot chunk at \(offset)+\(payload.count) of \(total)")
        case .features(_, let features):
            // A REQ peer (a delimiter in its envelope) reads one reply per request: nothing extra.
            let offered = envelope.count == 1 ? AuthorityFeature.forClients : []
            fuzzCheck(after == before && features == offered, "features reply \(features) to an envelope of \(envelope.count), or a state change")
        case .acks(let entries):
            // One message per step: its ack, if any, is a batch of one, which leaves as an `ack`.
            fuzzFailure("one client message was answered with \(entries.count) batched acks")
        }
        finishStep(after)
    }

    func worker(_ frames: [[UInt8]]) {
        let before = snapshot()
        let metricsBefore = engine.metrics
        now += 1
        engine.handleWorker(frames, now: now)
        let outbox = engine.takeOutbox()
        let after = snapshot()
        fuzzCheck(outbox.replies.isEmpty && outbox.promptReplies.isEmpty, "a worker message produced a client reply")
        let message = frames.count >= 2 ? try? WorkerMessage(frames: Array(frames.dropFirst())) : nil
        switch message {
        case .emit?, .done?, .doneWithEmit?, .failed?, .event?, .reports?:
            break
        default:
            fuzzCheck(after == before && outbox.applied.isEmpty && outbox.records.isEmpty, "a worker message that reports nothing changed the state")
        }
        if frames.count < 2 {
            fuzzCheck(engine.metrics[.malformed] == metricsBefore[.malformed] + 1 && outbox.toWorkers.isEmpty, "a worker message without a body was not dropped and counted")
        } else if message == nil {
            fuzzCheck(refusals(engine.metrics) == refusals(metricsBefore) + 1, "a refused worker message was not counted once")
            fuzzCheck(outbox.toWorkers.count == 1 && outbox.toWorkers[0].first == frames[0], "a refused worker message was not answered once, to its sender")
        }
        checkAppliedAndJobs(outbox, before: before, after: after, fromWorker: true)
        workerOutput(outbox.toWorkers)
        finishStep(after)
    }

    /// Applied mutations: consecutive versions, async ones once each and in emit order.
    func checkAppliedAndJobs(_ outbox: AuthorityEngine<R>.Outbox, before: Observed, after: Observed, fromWorker: Bool) {
        fuzzCheck(after.version >= before.version && after.actionSeq >= before.actionSeq, "version or action_seq went down")
        fuzzCheck(after.version - before.version == UInt64(outbox.applied.count), "\(outbox.applied.count) mutations applied, version moved by \(after.version - before.version)")
        for (offset, entry) in outbox.applied.enumerated() {
            let applied = entry.mutation
            fuzzCheck(applied.version == before.version + UInt64(offset) + 1, "applied mutation versions are not consecutive")
            switch applied.origin {
            case .sync:
                fuzzCheck(!fromWorker, "a worker message applied a sync mutation")
                model.syncApplied += 1
            case .async(let job, let emitIndex):
                fuzzCheck(fromWorker, "a client message applied an async mutation")
                let expected = model.nextEmit[job, default: 0]
                fuzzCheck(emitIndex == expected, "job \(job) applied emit \(emitIndex), expected \(expected)")
                model.nextEmit[job] = expected + 1
                model.asyncApplied += 1
            case .failure:
                fuzzCheck(fromWorker, "a client message applied a failure mutation")
                model.failureApplied += 1
            case .cancelled:
                fuzzFailure("\(R.name) has no cancellable effect, yet a cancel mutation was applied")
            }
            model.tally += R.tally(of: applied.mutation)
        }
        model.records += outbox.records
    }

    /// Everything sent to workers parses; remembers job assignments for later reports.
    func workerOutput(_ messages: [[[UInt8]]]) {
        for frames in messages {
            guard let peer = frames.first else { fuzzFailure("a worker message without a routing id") }
            let message: AuthorityToWorker
            do {
                message = try AuthorityToWorker(frames: Array(frames.dropFirst()))
            } catch {
                fuzzFailure("a message to a worker does not parse: \(error)")
            }
            let jobs: [(JobID, [UInt8])]
            switch message {
            case .job(let job, _, let payload): jobs = [(job, payload)]
            case .jobs(let entries):
                fuzzCheck(entries.count >= 2, "a jobs message of \(entries.count) job(s)")
                jobs = entries.map { ($0.job, $0.payload) }
            default: jobs = []
            }
            for (job, payload) in jobs {
                fuzzCheck((try? decoder.decode(R.Effect.self, from: payload)) != nil, "a job's payload is not an effect")
                model.jobs.append((job, peer))
                if model.jobs.count > 64 { model.jobs.removeFirst(model.jobs.count - 64) }
            }
        }
    }

    func finishStep(_ after: Observed) {
        fuzzCheck(after.version >= model.version && after.actionSeq >= model.actionSeq, "version or action_seq went down")
        model.version = after.version
        model.actionSeq = after.actionSeq
        fuzzCheck(after.version == model.syncApplied + model.asyncApplied + model.failureApplied,
                  "version \(after.version), but \(model.syncApplied) sync + \(model.asyncApplied) async + \(model.failureApplied) failure mutations were applied")
        let shown = R.tally(in: engine.sequencer.state)
        fuzzCheck(shown == model.tally, "\(R.name): the state shows \(shown), the applied mutations add up to \(model.tally)")
    }

    /// Replaces the engine with one restored from its checkpoint after a MessagePack round trip,
    /// as the authority does at start from its latest snapshot; workers must register again.
    func restart() {
        let before = snapshot()
        let restored = Self.makeEngine(maxInFlight: maxInFlight)
        do {
            let bytes = try encoder.encode(engine.checkpoint())
            restored.restore(try decoder.decode(AuthorityCheckpoint<R>.self, from: bytes))
        } catch {
            fuzzFailure("the checkpoint does not round-trip: \(error)")
        }
        let unreported = engine.sequencer.unreportedJobs.map(\.id)
        engine = restored
        fuzzCheck(snapshot() == before, "a restart changed the state, version or action_seq")
        fuzzCheck(engine.sequencer.unreportedJobs.map(\.id) == unreported, "a restart changed the unreported jobs")
        now += 1
        fuzzCheck(engine.dispatchUnreportedJobs(now: now) == unreported.count, "not every unreported job was queued after a restart")
        let outbox = engine.takeOutbox()
        fuzzCheck(outbox.isEmpty, "a restart without workers sent or applied something")
        model.jobs.removeAll()
    }

    // MARK: End of input

    /// Journal replay and checkpoint restore rebuild the same state.
    func finish() {
        let final = snapshot()
        let replayed = Self.makeEngine(maxInFlight: 10_000)
        for record in model.records {
            do {
                try replayed.replay(record)
            } catch {
                fuzzFailure("replaying journal record \(record) failed: \(error)")
            }
        }
        let replayedState = try? encoder.encode(replayed.sequencer.state)
        fuzzCheck(replayed.sequencer.version == final.version && replayed.sequencer.actionSeq == final.actionSeq && replayedState == final.state,
                  "replaying \(model.records.count) journal records gives version \(replayed.sequencer.version), action_seq \(replayed.sequencer.actionSeq); the engine is at \(final.version), \(final.actionSeq)")

        let restored = Self.makeEngine(maxInFlight: 10_000)
        do {
            let bytes = try encoder.encode(engine.checkpoint())
            restored.restore(try decoder.decode(AuthorityCheckpoint<R>.self, from: bytes))
        } catch {
            fuzzFailure("the checkpoint does not round-trip: \(error)")
        }
        let restoredState = try? encoder.encode(restored.sequencer.state)
        fuzzCheck(restored.sequencer.version == final.version && restored.sequencer.actionSeq == final.actionSeq && restoredState == final.state,
                  "a restored checkpoint is at version \(restored.sequencer.version); the engine is at \(final.version)")
        fuzzCheck(restored.sequencer.unreportedJobs.map(\.id) == engine.sequencer.unreportedJobs.map(\.id), "a restored checkpoint has other unreported jobs")
    }
}

// MARK: Entry points

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var script = Script(bytes: UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    let setup = script.byte()
    let maxInFlight = [1, 2, 4, 10_000][Int(setup >> 1 & 3)]
    if setup & 1 == 0 {
        Harness<Counter>(maxInFlight: maxInFlight).run(&script)
    } else {
        Harness<Primes>(maxInFlight: maxInFlight).run(&script)
    }
    return 0
}

@main
enum FuzzAuthority {
    static func main() { FuzzDriver.main(fuzz) }
}
