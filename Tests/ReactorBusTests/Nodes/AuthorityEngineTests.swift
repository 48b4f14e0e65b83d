import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing

/// The authority's message handling, driven with plain frames: no sockets, exact outcomes.
@Suite struct AuthorityEngineTests {
    let writer = HeaderWriter()
    let client: [UInt8] = [0, 1, 2, 3]
    let worker = PeerID([9, 9])
    let otherWorker = PeerID([8, 8])

    func makeEngine(maxInFlight: Int = 10_000, journaling: Bool = false, ledger: ClientLedgerLimits = ClientLedgerLimits()) -> AuthorityEngine<Counter> {
        var configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.maxInFlightPerClient = maxInFlight
        configuration.clientLedger = ledger
        return AuthorityEngine(reactor: Counter(), configuration: configuration, logger: Logger(label: "test", sink: .discard), journaling: journaling)
    }

    func action(_ action: Counter.Action, seq: UInt64, id: String = "c1") throws -> [[UInt8]] {
        [client] + ClientMessage.action(clientID: id, clientSeq: seq, payload: try MessagePackEncoder().encode(action)).frames(writer)
    }

    func fromWorker(_ peer: PeerID, _ message: WorkerMessage) -> [[UInt8]] { [peer.bytes] + message.frames(writer) }

    func replies(_ engine: AuthorityEngine<Counter>) throws -> [AuthorityReply] {
        try engine.takeOutbox().replies.map { reply in
            #expect(reply.routingID == client)
            return try reply.reply()
        }
    }

    func workerMessages(_ outbox: AuthorityEngine<Counter>.Outbox) throws -> [(PeerID, AuthorityToWorker)] {
        try outbox.toWorkers.map { (PeerID($0[0]), try AuthorityToWorker(frames: Array($0.dropFirst()))) }
    }

    @Test func anActionIsAckedWithItsSequenceAndVersion() throws {
        let engine = makeEngine()
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        engine.handleClient(try action(.countUp, seq: 2), now: 0)
        #expect(try replies(engine) == [.ack(clientSeq: 1, actionSeq: 1, version: 1), .ack(clientSeq: 2, actionSeq: 2, version: 2)])
        #expect(engine.sequencer.state.count == 2)
        #expect(engine.metrics[.actionsAccepted] == 2)
    }

    @Test func snapshotAndStatsRepliesAreMarkedRefusableAndAcksAndPongsAreNot() throws {
        let engine = makeEngine()
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        engine.handleClient([client] + ClientMessage.snapshot(requestID: 41).frames(writer), now: 0)
        engine.handleClient([client] + ClientMessage.ping(requestID: 42).frames(writer), now: 0)
        engine.handleClient([client, []] + ClientMessage.stats(requestID: 43).frames(writer), now: 0)
        let outbox = engine.takeOutbox()
        #expect(outbox.replies.count == 3)
        #expect(outbox.requestReplies == [1: .init(requestID: 41, envelopeCount: 1), 2: .init(requestID: 43, envelopeCount: 2)])
        #expect(engine.takeOutbox().requestReplies.isEmpty)
    }

    @Test func pongsAndHeartbeatsArePromptEverythingElseWaitsForTheJournal() throws {
        let engine = makeEngine()
        let worker = PeerID([9])
        engine.handleWorker(fromWorker(worker, .ready(name: "w", app: "counter", capacity: 1, kinds: [])), now: 0)
        _ = engine.takeOutbox()
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        engine.handleClient([client] + ClientMessage.ping(requestID: 42).frames(writer), now: 0)
        engine.tick(now: 1_000, sendHeartbeats: true)
        let outbox = engine.takeOutbox()
        #expect(try outbox.promptReplies.map { try AuthorityReply(frames: Array($0.dropFirst())) }
            == [.pong(requestID: 42, version: 1, startID: engine.startID, app: "counter")])
        #expect(try outbox.replies.map { try $0.reply() } == [.ack(clientSeq: 1, actionSeq: 1, version: 1)])
        #expect(try outbox.promptToWorkers.map { try AuthorityToWorker(frames: Array($0.dropFirst())) } == [.heartbeat(features: AuthorityFeature.all)])
        #expect(outbox.toWorkers.isEmpty)
    }

    @Test func aResentActionIsAckedAgainAndAppliedOnce() throws {
        let engine = makeEngine()
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        engine.handleClient(try action(.countUp, seq: 2), now: 0)
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        #expect(try replies(engine).last == .ack(clientSeq: 1, actionSeq: 1, version: 1))
        #expect(engine.sequencer.state.count == 2)
        #expect(engine.metrics[.actionsDuplicate] == 1)
    }

    @Test func aResendWithAnotherPayloadIsRefusedAsAConflict() throws {
        let engine = makeEngine()
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        let answers = try replies(engine)
        #expect(answers.count == 2)
        guard case .error(let ref, let code, _) = answers.last else { Issue.record("expected an error, got \(answers)"); return }
        #expect(ref == 1 && code == .conflict)
        #expect(engine.sequencer.state.count == 1)
        #expect(engine.metrics[.actionsConflict] == 1)
    }

    @Test func aResendWhoseAckIsNoLongerKeptIsAckedWithTheCurrentVersionAndNotApplied() throws {
        let engine = makeEngine(ledger: ClientLedgerLimits(rememberedAcks: 2))
        for seq in 1...5 as ClosedRange<UInt64> { engine.handleClient(try action(.countUp, seq: seq), now: 0) }
        _ = try replies(engine)
        engine.handleClient(try action(.countUp, seq: 2), now: 0)
        engine.handleClient(try action(.countUp, seq: 5), now: 0)
        #expect(try replies(engine) == [.ack(clientSeq: 2, actionSeq: 0, version: 5), .ack(clientSeq: 5, actionSeq: 5, version: 5)])
        #expect(engine.sequencer.state.count == 5)
        #expect(engine.metrics[.actionsDuplicate] == 2)
    }

    @Test func aForgottenClientsResendIsRefusedAndNotAppliedAgain() throws {
        let engine = makeEngine(ledger: ClientLedgerLimits(maxClients: 50))
        for seq in 1...3 as ClosedRange<UInt64> { engine.handleClient(try action(.countUp, seq: seq, id: "early"), now: 0) }
        for index in 1...100 { engine.handleClient(try action(.countUp, seq: 1, id: "other-\(index)"), now: 0) }
        _ = try replies(engine)
        engine.handleClient(try action(.countUp, seq: 2, id: "early"), now: 0)
        let answers = try replies(engine)
        guard case .error(let ref, let code, let message)? = answers.first, answers.count == 1 else { Issue.record("expected one error, got \(answers)"); return }
        #expect(ref == 2 && code == .unknownClient)
        #expect(message.contains("--max-clients"))
        #expect(engine.sequencer.state.count == 103)
        #expect(engine.metrics[.actionsUnknownClient] == 1)
        #expect(engine.currentMetrics().dictionary["clients_forgotten"] ?? 0 >= 51)
    }

    @Test func theLedgerSurvivesACheckpointWithTheConfiguredLimits() throws {
        let engine = makeEngine(ledger: ClientLedgerLimits(maxClients: 10))
        for index in 1...20 { engine.handleClient(try action(.countUp, seq: 1, id: "c\(index)"), now: 0) }
        _ = try replies(engine)
        let payload = try MessagePackEncoder().encode(engine.checkpoint())
        let restored = makeEngine(ledger: ClientLedgerLimits(maxClients: 10))
        restored.restore(try MessagePackDecoder().decode(AuthorityCheckpoint<Counter>.self, from: payload))
        restored.handleClient(try action(.countUp, seq: 1, id: "c1"), now: 0)
        restored.handleClient(try action(.countUp, seq: 1, id: "c20"), now: 0)
        let answers = try replies(restored)
        guard case .error(_, .unknownClient, _) = answers.first else { Issue.record("expected unknown_client, got \(answers)"); return }
        #expect(answers.last == .ack(clientSeq: 1, actionSeq: 20, version: 20))
        #expect(restored.sequencer.state.count == 20)
    }

    @Test func asyncActionsRunOnARegisteredWorkerAndApplyExactlyOnce() throws {
        let engine = makeEngine()
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        #expect(try replies(engine) == [.ack(clientSeq: 1, actionSeq: 1, version: 0)])
        engine.handleWorker(fromWorker(worker, .ready(name: "w", app: "counter", capacity: 4, kinds: [])), now: 1)
        let sent = try workerMessages(engine.takeOutbox())
        let job = JobID(actionSeq: 1, effectIndex: 0)
        let effect = try MessagePackEncoder().encode(Counter.Effect.slowIncrease)
        #expect(sent.map(\.1) == [.welcome(heartbeatMilliseconds: 1_000), .heartbeat(features: AuthorityFeature.all),
                                   .job(job, kind: "slowIncrease", payload: effect)])
        #expect(sent.allSatisfy { $0.0 == worker })
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        engine.handleWorker(fromWorker(worker, .emit(job: job, emitIndex: 0, payload: increase)), now: 2)
        engine.handleWorker(fromWorker(worker, .emit(job: job, emitIndex: 0, payload: increase)), now: 2)
        engine.handleWorker(fromWorker(worker, .done(job: job, emitCount: 1)), now: 3)
        let outbox = engine.takeOutbox()
        #expect(outbox.applied.map(\.mutation.version) == [1])
        #expect(outbox.applied.first?.payload == increase)
        #expect(engine.sequencer.state.count == 1)
        #expect(engine.sequencer.openJobCount == 0)
        #expect(engine.metrics[.emitsDuplicate] == 1)
        #expect(engine.metrics[.jobsDone] == 1)
    }

    @Test func reportsFromAWorkerThatDoesNotOwnTheJobAreDropped() throws {
        let engine = makeEngine()
        engine.handleWorker(fromWorker(worker, .ready(name: "a", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleWorker(fromWorker(otherWorker, .ready(name: "b", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        let assigned = try workerMessages(engine.takeOutbox()).first { if case .job = $0.1 { true } else { false } }
        let owner = try #require(assigned?.0)
        let stranger = owner == worker ? otherWorker : worker
        let job = JobID(actionSeq: 1, effectIndex: 0)
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        engine.handleWorker(fromWorker(stranger, .emit(job: job, emitIndex: 0, payload: increase)), now: 1)
        engine.handleWorker(fromWorker(stranger, .done(job: job, emitCount: 1)), now: 1)
        #expect(engine.metrics[.foreignReports] == 2)
        #expect(engine.sequencer.version == 0)
        #expect(engine.sequencer.openJobCount == 1)
    }

    @Test func aDoneDeclaringMutationsThatNeverArrivedFailsTheJobInsteadOfHoldingIt() throws {
        let engine = makeEngine(journaling: true)
        engine.handleWorker(fromWorker(worker, .ready(name: "a", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        var records = engine.takeOutbox().records
        let job = JobID(actionSeq: 1, effectIndex: 0)
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        engine.handleWorker(fromWorker(worker, .emit(job: job, emitIndex: 0, payload: increase)), now: 1)
        engine.handleWorker(fromWorker(worker, .done(job: job, emitCount: 3)), now: 1)
        records += engine.takeOutbox().records
        // The one mutation that arrived is applied once; the job ends (Counter has no failure hook).
        #expect(engine.sequencer.state.count == 1)
        #expect(engine.sequencer.version == 1)
        #expect(engine.sequencer.openJobCount == 0)
        #expect(engine.metrics[.incompleteReports] == 1)
        #expect(engine.metrics[.jobsFailed] == 1)
        #expect(engine.metrics[.jobsDone] == 0)
        // The journal says the job failed, so a restart neither waits for it nor runs it again.
        let restored = makeEngine(journaling: true)
        for record in records { try restored.replay(record) }
        #expect(restored.sequencer.state.count == 1)
        #expect(restored.sequencer.unreportedJobs.isEmpty)
        #expect(restored.sequencer.openJobCount == 0)
    }

    @Test func aReplayJournalsNothingAgainAndGathersAppliedMutationsOnlyWhenAsked() throws {
        let engine = makeEngine(journaling: true)
        engine.handleWorker(fromWorker(worker, .ready(name: "a", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 2), now: 0)
        let job = JobID(actionSeq: 2, effectIndex: 0)
        engine.handleWorker(fromWorker(worker, .emit(job: job, emitIndex: 0, payload: try MessagePackEncoder().encode(Counter.Mutation.increase))), now: 1)
        engine.handleWorker(fromWorker(worker, .done(job: job, emitCount: 1)), now: 1)
        let records = engine.takeOutbox().records
        #expect(records.count == 4)

        // Recovery and a standby: nothing gathered, nothing journaled again, nothing left to send.
        let recovered = makeEngine(journaling: true)
        for record in records { #expect(try recovered.replay(record).isEmpty) }
        #expect(recovered.sequencer.state.count == 2)
        #expect(recovered.sequencer.openJobCount == 0)
        #expect(recovered.takeOutbox().isEmpty)

        // The journal tools: each record's mutations, in order; still nothing to send.
        let inspected = makeEngine(journaling: true)
        let applied = try records.map { try inspected.replay($0, collectingApplied: true).map(\.mutation) }
        #expect(applied == [[.increase], [], [.increase], []])
        #expect(inspected.sequencer.state.count == 2)
        #expect(inspected.takeOutbox().isEmpty)
    }

    @Test func aDoneCarryingTheLastMutationIsAnEmitThenADone() throws {
        let engine = makeEngine(journaling: true)
        engine.handleWorker(fromWorker(worker, .ready(name: "a", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 2), now: 0)
        var records = engine.takeOutbox().records
        let first = JobID(actionSeq: 1, effectIndex: 0), second = JobID(actionSeq: 2, effectIndex: 0)
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        engine.handleWorker(fromWorker(worker, .doneWithEmit(job: first, emitCount: 1, payload: increase)), now: 1)
        let outbox = engine.takeOutbox()
        records += outbox.records
        #expect(outbox.applied.map(\.mutation.version) == [1])
        #expect(outbox.applied.first?.payload == increase)
        // The worker's slot is free again: the second job went to it.
        #expect(try outbox.toWorkers.map { try AuthorityToWorker(frames: Array($0.dropFirst())) } == [
            .job(second, kind: "slowIncrease", payload: try MessagePackEncoder().encode(Counter.Effect.slowIncrease)),
        ])
        // Sent again, it is dropped as its two parts would be: the job is no longer the worker's.
        engine.handleWorker(fromWorker(worker, .doneWithEmit(job: first, emitCount: 1, payload: increase)), now: 2)
        records += engine.takeOutbox().records
        #expect(engine.sequencer.state.count == 1)
        #expect(engine.sequencer.version == 1)
        #expect(engine.metrics[.jobsDone] == 1)
        #expect(engine.metrics[.foreignReports] == 2)
        // Journaled as the two events it is, so a replay (of any release) reads it.
        let journaled = records.compactMap { record -> String? in
            switch record {
            case .emitted(let job, let index, _): "emitted \(job) \(index)"
            case .completed(let job, let count): "completed \(job) \(count)"
            default: nil
            }
        }
        #expect(journaled == ["emitted 1.0 0", "completed 1.0 1"])
        let restored = makeEngine(journaling: true)
        for record in records { try restored.replay(record) }
        #expect(restored.sequencer.state.count == 1)
        #expect(restored.sequencer.unreportedJobs.map(\.id) == [second])
    }

    @Test func aDoneWithAMutationThatIsNotTheAppsFailsTheJobLikeAnIncompleteReport() throws {
        let engine = makeEngine()
        engine.handleWorker(fromWorker(worker, .ready(name: "a", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        _ = engine.takeOutbox()
        let job = JobID(actionSeq: 1, effectIndex: 0)
        engine.handleWorker(fromWorker(worker, .doneWithEmit(job: job, emitCount: 1, payload: [0xc1])), now: 1)
        let sent = try workerMessages(engine.takeOutbox()).map(\.1)
        #expect(sent == [.error(ref: 1, code: .malformed, message: "emit 0 of job 1.0 is not a counter mutation")])
        #expect(engine.metrics[.badMutations] == 1)
        #expect(engine.metrics[.incompleteReports] == 1)
        #expect(engine.sequencer.version == 0)
        #expect(engine.sequencer.openJobCount == 0)
    }

    @Test func aBadActionNamesTheUnknownCaseOrTheWrongField() throws {
        let engine = makeEngine()
        let unknownCase = MessagePackValue.map([(.string("dance"), .map([]))]).pack()
        engine.handleClient([client] + ClientMessage.action(clientID: "c", clientSeq: 1, payload: unknownCase).frames(writer), now: 0)
        engine.handleClient([client] + ClientMessage.action(clientID: "c", clientSeq: 2, payload: MessagePackValue.string("countUp").pack()).frames(writer), now: 0)
        let messages = try replies(engine).map { reply -> String in
            guard case .error(_, .badAction, let message) = reply else { return "not bad_action: \(reply)" }
            return message
        }
        #expect(messages.first == "the payload is not a counter action: 'dance' is not a case of Counter.Action; its cases are countUp, countUpAsync")
        #expect(messages.last?.hasPrefix("the payload is not a counter action: Counter.Action: ") == true, "\(messages)")
        #expect(messages.allSatisfy { !$0.contains("DecodingError") })
    }

    @Test func badInputIsAnsweredAndCountedAndChangesNothing() throws {
        let engine = makeEngine()
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        _ = engine.takeOutbox()
        // The ref names the refused message whenever its client_seq or request_id can be read.
        let cases: [([[UInt8]], ErrorCode, UInt64)] = [
            ([client, [0xc1]], .malformed, 0),
            ([client, Array("garbage".utf8)], .malformed, 0),
            ([client, MessagePackValue.array([.uint(7), .string("ping"), .uint(41)]).pack()], .unsupportedVersion, 41),
            ([client, MessagePackValue.array([.uint(1), .string("explode")]).pack()], .unknownKind, 0),
            ([client, MessagePackValue.array([.uint(1), .string("explode"), .uint(42)]).pack()], .unknownKind, 42),
            ([client, MessagePackValue.array([.uint(1), .string("action"), .string("c"), .uint(5)]).pack()], .malformed, 5),
            ([client] + ClientMessage.action(clientID: "c", clientSeq: 9, payload: MessagePackValue.map([(.string("dance"), .map([]))]).pack()).frames(writer), .badAction, 9),
            ([client] + ClientMessage.action(clientID: "c", clientSeq: 10, payload: [0x92, 0x01]).frames(writer), .badAction, 10),
        ]
        for (frames, code, ref) in cases {
            engine.handleClient(frames, now: 1)
            let answer = try replies(engine)
            #expect(answer.count == 1)
            if case .error(let gotRef, let got, _) = answer.first { #expect(got == code && gotRef == ref) } else { Issue.record("expected an error for \(code)") }
        }
        engine.handleClient([client], now: 1)
        #expect(try replies(engine).isEmpty)
        #expect(engine.sequencer.state.count == 1)
        #expect(engine.sequencer.version == 1)
        #expect(engine.sequencer.actionSeq == 1)
        #expect(engine.metrics[.malformed] == 4)
        #expect(engine.metrics[.unsupportedVersion] == 1)
        #expect(engine.metrics[.unknownKind] == 2)
        #expect(engine.metrics[.badActions] == 2)
    }

    @Test func workerMistakesAreRefused() throws {
        let engine = makeEngine()
        engine.handleWorker(fromWorker(worker, .heartbeat), now: 0)
        engine.handleWorker(fromWorker(worker, .ready(name: "w", app: "primes", capacity: 1, kinds: [])), now: 0)
        engine.handleWorker(fromWorker(worker, .ready(name: "w", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleWorker(fromWorker(worker, .done(job: JobID(actionSeq: 99, effectIndex: 0), emitCount: 0)), now: 0)
        engine.handleWorker([worker.bytes, [0xc1]], now: 0)
        let sent = try workerMessages(engine.takeOutbox()).map(\.1)
        #expect(sent.count == 5)
        #expect(sent[0] == .error(ref: 0, code: .unknownWorker, message: "unknown worker: send ready first"))
        if case .error(_, let code, _) = sent[1] { #expect(code == .wrongApp) } else { Issue.record("expected wrong_app") }
        #expect(sent[2] == .welcome(heartbeatMilliseconds: 1_000))
        #expect(sent[3] == .heartbeat(features: AuthorityFeature.all))
        if case .error(_, let code, _) = sent[4] { #expect(code == .malformed) } else { Issue.record("expected malformed") }
        #expect(engine.metrics[.foreignReports] == 1)
        #expect(engine.sequencer.version == 0)
    }

    @Test func aClientOverItsInFlightLimitIsBusyAndOthersAreServed() throws {
        let engine = makeEngine(maxInFlight: 2)
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 2), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 3), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 1, id: "other"), now: 0)
        let answers = try replies(engine)
        #expect(answers.count == 4)
        if case .error(let ref, let code, _) = answers[2] {
            #expect(ref == 3)
            #expect(code == .busy)
        } else {
            Issue.record("expected busy")
        }
        #expect(answers[3] == .ack(clientSeq: 1, actionSeq: 3, version: 0))
        #expect(engine.metrics[.actionsBusy] == 1)
    }

    @Test func aDeadWorkersJobGoesToAnotherWorker() throws {
        let engine = makeEngine()
        engine.handleWorker(fromWorker(worker, .ready(name: "a", app: "counter", capacity: 1, kinds: [])), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        engine.handleWorker(fromWorker(otherWorker, .ready(name: "b", app: "counter", capacity: 1, kinds: [])), now: 2_000)
        _ = engine.takeOutbox()
        engine.tick(now: 3_000, sendHeartbeats: false)
        let sent = try workerMessages(engine.takeOutbox())
        #expect(sent.count == 1)
        #expect(sent.first?.0 == otherWorker)
        #expect(engine.metrics[.workersLost] == 1)
        #expect(engine.metrics[.jobsRedispatched] == 1)
    }

    @Test func replayingTheJournalRecordsRebuildsTheSameState() throws {
        let engine = makeEngine(journaling: true)
        engine.handleWorker(fromWorker(worker, .ready(name: "a", app: "counter", capacity: 8, kinds: [])), now: 0)
        for seq in 1...6 as ClosedRange<UInt64> {
            engine.handleClient(try action(seq.isMultiple(of: 2) ? .countUp : .countUpAsync, seq: seq), now: 0)
        }
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        engine.handleWorker(fromWorker(worker, .emit(job: JobID(actionSeq: 1, effectIndex: 0), emitIndex: 0, payload: increase)), now: 1)
        engine.handleWorker(fromWorker(worker, .done(job: JobID(actionSeq: 1, effectIndex: 0), emitCount: 1)), now: 1)
        engine.handleWorker(fromWorker(worker, .emit(job: JobID(actionSeq: 3, effectIndex: 0), emitIndex: 0, payload: increase)), now: 1)
        let records = engine.takeOutbox().records
        #expect(records.count == 9)

        let restored = makeEngine(journaling: true)
        for record in records { try restored.replay(record) }
        #expect(restored.sequencer.state == engine.sequencer.state)
        #expect(restored.sequencer.version == engine.sequencer.version)
        // Jobs 3 (emitted, no DONE) and 5 (nothing yet) must run again.
        #expect(restored.sequencer.unreportedJobs.map(\.id) == [JobID(actionSeq: 3, effectIndex: 0), JobID(actionSeq: 5, effectIndex: 0)])
        restored.handleWorker(fromWorker(worker, .ready(name: "a", app: "counter", capacity: 8, kinds: [])), now: 5)
        #expect(restored.dispatchUnreportedJobs(now: 5) == 2)
        // Job 3 runs again from the start: its first emit is a duplicate and is not applied twice.
        restored.handleWorker(fromWorker(worker, .emit(job: JobID(actionSeq: 3, effectIndex: 0), emitIndex: 0, payload: increase)), now: 6)
        #expect(restored.metrics[.emitsDuplicate] == 1)
        // A resend of an acked action after the restart is still a duplicate.
        restored.handleClient(try action(.countUp, seq: 2), now: 5)
        #expect(restored.sequencer.state.count == 5)
        #expect(restored.metrics[.actionsDuplicate] == 1)
    }
}
