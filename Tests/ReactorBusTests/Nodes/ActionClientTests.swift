import Foundation
import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Synchronization
import Testing
import ZeroMQ
import TestSupport

@Suite struct ActionClientTests {
    private func makeClient(
        _ fake: FakeClientAuthority, _ context: ZMQContext, clientID: String? = nil,
        timeout: Duration = .seconds(5), retries: Int = 3, window: Int = 1_000,
        configure: (inout ActionClientConfiguration) -> Void = { _ in }
    ) throws -> ActionClient<Counter> {
        try makeClient(endpoint: fake.actionsEndpoint, context, clientID: clientID, timeout: timeout, retries: retries, window: window, configure: configure)
    }

    private func makeClient(
        endpoint: String, _ context: ZMQContext, clientID: String? = nil,
        timeout: Duration = .seconds(5), retries: Int = 3, window: Int = 1_000,
        configure: (inout ActionClientConfiguration) -> Void = { _ in }
    ) throws -> ActionClient<Counter> {
        var configuration = ActionClientConfiguration(actionsEndpoint: endpoint, timeout: timeout, retries: retries, window: window)
        if let clientID { configuration.clientID = clientID }
        configure(&configuration)
        let client = try ActionClient<Counter>(configuration: configuration, logger: quietLogger, context: context)
        try client.start()
        return client
    }

    @Test func threeActionsAreAckedWithConsecutiveSequenceNumbersAndOneClientID() async throws {
        try await FakeClientAuthority.with { context, fake in
            let client = try makeClient(fake, context)
            defer { client.close() }
            var acks: [ActionAck] = []
            for _ in 0..<3 { acks.append(try await client.send(.countUp)) }
            #expect(acks == [
                ActionAck(clientSeq: 1, actionSeq: 1, version: 101),
                ActionAck(clientSeq: 2, actionSeq: 2, version: 102),
                ActionAck(clientSeq: 3, actionSeq: 3, version: 103),
            ])
            let actions = fake.recorded.actions
            #expect(actions.map(\.clientSeq) == [1, 2, 3])
            #expect(Set(actions.map(\.clientID)) == [client.configuration.clientID])
            #expect(UUID(uuidString: client.configuration.clientID) != nil, "the default client id is a UUID")
            let countUp = try MessagePackEncoder().encode(Counter.Action.countUp)
            #expect(actions.allSatisfy { $0.payload == countUp })
        }
    }

    @Test func encodedPayloadsGoOutAsGiven() async throws {
        try await FakeClientAuthority.with { context, fake in
            let client = try makeClient(fake, context, clientID: "cli")
            defer { client.close() }
            let payload = try MessagePackValue(jsonText: #"{"countUpAsync": {}}"#).pack()
            let ack = try await client.send(encoded: payload)
            #expect(ack.clientSeq == 1)
            #expect(fake.recorded.actions.map(\.payload) == [payload])
            #expect(fake.recorded.actions.map(\.clientID) == ["cli"])
        }
    }

    @Test func anUnansweredActionIsResentWithTheSameSequenceNumberAndAckedOnce() async throws {
        let handler: FakeClientAuthority.Handler = { message, copy in
            if case .action(_, 1, _) = message, copy == 1 { return .ignore }
            return .answer
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let client = try makeClient(fake, context, clientID: "retrier", timeout: .milliseconds(500))
            defer { client.close() }
            let ack = try await client.send(.countUp)
            #expect(ack == ActionAck(clientSeq: 1, actionSeq: 1, version: 101))
            let actions = fake.recorded.actions
            #expect(actions.count == 2)
            #expect(actions.allSatisfy { $0.clientID == "retrier" && $0.clientSeq == 1 })
            // The next action still gets the next number.
            #expect(try await client.send(.countUp).clientSeq == 2)
        }
    }

    @Test func anActionNeverAnsweredTimesOutAfterRetriesPlusOneAttempts() async throws {
        try await FakeClientAuthority.with(handler: { _, _ in .ignore }) { context, fake in
            let client = try makeClient(fake, context, clientID: "lonely", timeout: .milliseconds(30), retries: 2)
            defer { client.close() }
            await #expect(throws: ClientError.timedOut(attempts: 3)) {
                try await client.send(.countUp)
            }
            #expect(await fake.eventually { $0.actions.count == 3 })
            #expect(fake.recorded.actions.allSatisfy { $0.clientID == "lonely" && $0.clientSeq == 1 })
            #expect(await FakeClientAuthority.eventually { client.diagnostics.value.actionSends == 3 })
        }
    }

    @Test func anErrorReplyFailsTheSendWithTheRefusal() async throws {
        let handler: FakeClientAuthority.Handler = { message, _ in
            guard case .action(_, let seq, _) = message else { return .answer }
            return .reply([.error(ref: seq, code: .badAction, message: "not a counter action")])
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let client = try makeClient(fake, context)
            defer { client.close() }
            do throws(ClientError) {
                _ = try await client.send(.countUp)
                Issue.record("expected a refusal")
            } catch {
                #expect(error == .refused(code: .badAction, message: "not a counter action"))
                #expect(error.description.contains("bad_action"))
            }
            #expect(fake.recorded.actions.count == 1, "a refusal is not retried")
        }
    }

    @Test func busyIsWaitedOutWithGrowingPausesAndResentWithTheSameSequenceNumber() async throws {
        // Refused three times, accepted at the fourth copy.
        let handler: FakeClientAuthority.Handler = { message, copy in
            guard case .action(_, let seq, _) = message, copy <= 3 else { return .answer }
            return .reply([.error(ref: seq, code: .busy, message: "too many actions in flight")])
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let client = try makeClient(fake, context, clientID: "patient") {
                $0.busyBackoff = BusyBackoff(initial: .milliseconds(40), maximum: .milliseconds(80), giveUpAfter: .seconds(30))
            }
            defer { client.close() }
            let started = ContinuousClock.now
            let ack = try await client.send(.countUp)
            let waited = ContinuousClock.now - started
            #expect(ack == ActionAck(clientSeq: 1, actionSeq: 1, version: 101))
            let actions = fake.recorded.actions
            #expect(actions.count == 4)
            #expect(actions.allSatisfy { $0.clientID == "patient" && $0.clientSeq == 1 })
            #expect(fake.recorded.acksSent == [1: 1])
            #expect(client.diagnostics.value.busyRefusals == 3)
            #expect(client.diagnostics.value.actionSends == 4)
            // Pauses of at least half of 40, 80 and 80 ms (jitter), at most the full values plus slack.
            #expect(waited >= .milliseconds(100), "waited \(waited)")
            #expect(waited < .seconds(5), "waited \(waited)")
            #expect(try await client.send(.countUp).clientSeq == 2)
        }
    }

    @Test func manyBusyActionsAreEachAcceptedExactlyOnce() async throws {
        // Every action is refused once, as an authority at its limit would.
        let handler: FakeClientAuthority.Handler = { message, copy in
            guard case .action(_, let seq, _) = message, copy == 1 else { return .answer }
            return .reply([.error(ref: seq, code: .busy, message: "busy")])
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let client = try makeClient(fake, context, window: 8)
            defer { client.close() }
            let acks = try await withThrowingTaskGroup(of: ActionAck.self) { group in
                for _ in 0..<50 { group.addTask { try await client.send(.countUpAsync) } }
                return try await group.reduce(into: [ActionAck]()) { $0.append($1) }
            }
            #expect(acks.count == 50)
            #expect(Set(acks.map(\.clientSeq)) == Set(1...50))
            #expect(Set(acks.map(\.actionSeq)) == Set(1...50))
            #expect(fake.recorded.actions.count == 100)
            #expect(fake.recorded.acksSent.count == 50 && fake.recorded.acksSent.values.allSatisfy { $0 == 1 })
            #expect(client.diagnostics.value.busyRefusals == 50)
        }
    }

    @Test func aSecondBusyForAnActionAlreadyWaitingChangesNothing() async throws {
        // Both copies of a resent action can be refused (one from the socket's queue after a
        // reconnection, one resent); the second refusal must not fail the call.
        let handler: FakeClientAuthority.Handler = { message, copy in
            guard case .action(_, let seq, _) = message, copy == 1 else { return .answer }
            return .reply([.error(ref: seq, code: .busy, message: "busy"), .error(ref: seq, code: .busy, message: "busy")])
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let client = try makeClient(fake, context)
            defer { client.close() }
            #expect(try await client.send(.countUp) == ActionAck(clientSeq: 1, actionSeq: 1, version: 101))
            #expect(fake.recorded.actions.count == 2)
            #expect(client.diagnostics.value.busyRefusals == 1)
            #expect(await FakeClientAuthority.eventually { client.diagnostics.value.lateAnswers == 1 })
        }
    }

    @Test func busyPastTheGiveUpTimeFailsTheSendWithTheRefusal() async throws {
        let handler: FakeClientAuthority.Handler = { message, _ in
            guard case .action(_, let seq, _) = message else { return .answer }
            return .reply([.error(ref: seq, code: .busy, message: "too many actions in flight")])
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let atOnce = try makeClient(fake, context, clientID: "impatient") { $0.busyBackoff.giveUpAfter = .zero }
            defer { atOnce.close() }
            await #expect(throws: ClientError.refused(code: .busy, message: "too many actions in flight")) {
                try await atOnce.send(.countUp)
            }
            #expect(fake.recorded.actions.filter { $0.clientID == "impatient" }.count == 1, "give-up time zero: no resend")

            let bounded = try makeClient(fake, context, clientID: "bounded") {
                $0.busyBackoff = BusyBackoff(initial: .milliseconds(10), maximum: .milliseconds(20), giveUpAfter: .milliseconds(200))
            }
            defer { bounded.close() }
            let started = ContinuousClock.now
            do throws(ClientError) {
                _ = try await bounded.send(.countUp)
                Issue.record("expected busy")
            } catch {
                #expect(error == .refused(code: .busy, message: "too many actions in flight"))
                #expect(error.description.contains("give-up time"))
            }
            let waited = ContinuousClock.now - started
            // The client's loop reads its clock in whole milliseconds: allow that rounding.
            #expect(waited >= .milliseconds(199) && waited < .seconds(5), "waited \(waited)")
            // Resent after 10–20 ms pauses until the 200 ms give-up time: more than once, and
            // never faster than the pauses allow (how many exactly depends on the machine's load).
            let most = Int(waited / .milliseconds(10)) + 1
            #expect(await fake.eventually { $0.actions.filter { $0.clientID == "bounded" }.count >= 2 })
            let sends = fake.recorded.actions.filter { $0.clientID == "bounded" }.count
            #expect(sends <= most, "\(sends) sends in \(waited)")
        }
    }

    @Test func anUnreachableAuthorityFailsEveryCallWithinTheConnectTimeout() async throws {
        let context = try ZMQContext()
        let endpoint = try Self.unusedEndpoint(context)
        // Attempts × timeout is 4 × 60 s: ending within 30 s can only be the connect deadline's.
        let client = try makeClient(endpoint: endpoint, context, timeout: .seconds(60)) { $0.connectTimeout = .milliseconds(400) }
        let started = ContinuousClock.now
        let results = await withTaskGroup(of: ClientError?.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    do throws(ClientError) { _ = try await client.send(.countUp); return nil } catch { return error }
                }
            }
            group.addTask {
                do throws(ClientError) { _ = try await client.ping(); return nil } catch { return error }
            }
            return await group.reduce(into: [ClientError?]()) { $0.append($1) }
        }
        let waited = ContinuousClock.now - started
        let expected = ClientError.unreachable(endpoint: endpoint, waited: .milliseconds(400))
        #expect(results == Array(repeating: expected, count: 6))
        // Bounded by the connect deadline, not by attempts × timeout; the upper bound leaves room
        // for a loaded machine running tests in parallel (alone this takes 0.4 s).
        #expect(waited >= .milliseconds(400) && waited < .seconds(30), "waited \(waited)")
        #expect(expected.description.contains(endpoint) && expected.description.contains("0.4 s"))
        #expect(client.diagnostics.value.actionSends == 0, "nothing is sent without a connection")
        client.close()
        await client.wait()
        #expect(context.terminate(timeout: promptly))
    }

    @Test func unacknowledgedActionsAreResentAtOnceWhenTheAuthorityComesBack() async throws {
        let context = try ZMQContext()
        // The first authority takes the actions and dies before answering.
        let first = try await FakeClientAuthority.start(context: context, handler: { _, _ in .ignore })
        let client = try makeClient(endpoint: first.actionsEndpoint, context, clientID: "survivor", timeout: .seconds(60))
        let sending = Task {
            try await withThrowingTaskGroup(of: ActionAck.self) { group in
                for _ in 0..<3 { group.addTask { try await client.send(.countUp) } }
                return try await group.reduce(into: [ActionAck]()) { $0.append($1) }.sorted { $0.clientSeq < $1.clientSeq }
            }
        }
        #expect(await first.eventually { $0.actions.count == 3 })
        await first.stop()
        let second = try await Self.restart(at: first.actionsEndpoint, context)
        let restarted = ContinuousClock.now
        let acks = try await sending.value
        let stall = ContinuousClock.now - restarted
        #expect(acks.map(\.clientSeq) == [1, 2, 3])
        // The reconnect, not the 60 s attempt timeout, triggered the resend. (How fast it is —
        // about 0.1 s — is a figure for the benchmark, not for a test on a loaded machine.)
        #expect(stall < promptly, "an attempt timeout is 60 s; the resend came after \(stall)")
        let resent = second.recorded.actions
        #expect(resent.map(\.clientSeq).sorted() == [1, 2, 3])
        #expect(resent.allSatisfy { $0.clientID == "survivor" })
        #expect(second.recorded.acksSent == [1: 1, 2: 1, 3: 1])
        #expect(first.recorded.features == [["acks"]] && second.recorded.features == [["acks"]], "asked again on the new connection")
        #expect(client.diagnostics.value.connections == 2)
        #expect(client.diagnostics.value.reconnectResends == 3)
        client.close()
        await client.wait()
        await second.stop()
        #expect(context.terminate(timeout: promptly))
    }

    @Test func aNewStartIDInAPongResendsUnacknowledgedActions() async throws {
        // The same connection, but the pongs after the first report another start id, as a
        // restarted authority behind a proxy would; the first copy of the action is lost.
        let pings = Atomic<Int>(0)
        let handler: FakeClientAuthority.Handler = { message, copy in
            switch message {
            case .ping(let id):
                let count = pings.add(1, ordering: .relaxed).newValue
                return .reply([.pong(requestID: id, version: 0, startID: count == 1 ? 7 : 8, app: "counter")])
            case .action where copy == 1: return .ignore
            default: return .answer
            }
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let client = try makeClient(fake, context, clientID: "watcher", timeout: .seconds(60))
            defer { client.close() }
            #expect(await FakeClientAuthority.eventually { client.diagnostics.value.connections == 1 })
            #expect(await fake.eventually { $0.received.count == 1 }, "the ping on connecting")
            let started = ContinuousClock.now
            let ack = try await client.send(.countUp)
            #expect(ack.clientSeq == 1)
            #expect(ContinuousClock.now - started < .seconds(5), "resent after the probe, not after the 60 s timeout")
            #expect(fake.recorded.actions.map(\.clientSeq) == [1, 1])
            #expect(fake.recorded.acksSent == [1: 1])
        }
    }

    @Test func theClientAsksForBatchedAcksAndSettlesEachAckOfOne() async throws {
        // The fake answers the first two actions only in the `acks` message it sends for the third.
        let handler: FakeClientAuthority.Handler = { message, _ in
            guard case .action(_, let seq, _) = message else { return .answer }
            guard seq == 3 else { return .ignore }
            return .reply([.acks((1 ... 3).map { AckBatch.Entry(clientSeq: $0, actionSeq: 10 + $0, version: 20 + $0) })])
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let client = try makeClient(fake, context, clientID: "batched", timeout: .seconds(60))
            defer { client.close() }
            let acks = try await withThrowingTaskGroup(of: ActionAck.self) { group in
                for _ in 0..<3 { group.addTask { try await client.send(.countUp) } }
                return try await group.reduce(into: [ActionAck]()) { $0.append($1) }.sorted { $0.clientSeq < $1.clientSeq }
            }
            #expect(acks == (1 ... 3).map { ActionAck(clientSeq: $0, actionSeq: 10 + $0, version: 20 + $0) })
            #expect(fake.recorded.features == [["acks"]], "asked once, on connecting")
            #expect(fake.recorded.actions.map(\.clientSeq) == [1, 2, 3], "nothing resent")
            let diagnostics = client.diagnostics.value
            #expect(diagnostics.lateAnswers == 0 && diagnostics.badReplies == 0)
        }
    }

    /// An older authority answers `unknown_kind`; one that refuses it otherwise is used alike.
    @Test(arguments: [ErrorCode.unknownKind, .malformed])
    func anAuthorityThatRefusesTheFeaturesRequestIsUsedAsBefore(refusal: ErrorCode) async throws {
        let handler: FakeClientAuthority.Handler = { message, _ in
            guard case .features(let id, _) = message else { return .answer }
            return .reply([.error(ref: id, code: refusal, message: "refused 'features'")])
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let client = try makeClient(fake, context, clientID: "older")
            defer { client.close() }
            var acks: [ActionAck] = []
            for _ in 0..<3 { acks.append(try await client.send(.countUp)) }
            #expect(acks.map(\.actionSeq) == [1, 2, 3])
            #expect(fake.recorded.features == [["acks"]])
            let diagnostics = client.diagnostics.value
            #expect(diagnostics.lateAnswers == 0 && diagnostics.badReplies == 0, "the refusal answers the request; nothing is left over")
        }
    }

    /// Starts a fake where a stopped one listened; ZeroMQ closes the old listener in the
    /// background, so the bind is retried until the port is free (bounded by ``promptly``).
    private static func restart(at endpoint: String, _ context: ZMQContext) async throws -> FakeClientAuthority {
        let deadline = ContinuousClock.now + promptly
        while true {
            do {
                return try await FakeClientAuthority.start(context: context, actions: endpoint)
            } catch let error as ZMQError where error.code == EADDRINUSE && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// A loopback endpoint nobody listens on: bound once for a free port, then closed.
    /// An endpoint nobody binds: an ipc path of its own, so that no other test of a parallel
    /// run can take it (a TCP port freed here could be bound again by any test at once).
    private static func unusedEndpoint(_ context: ZMQContext) throws -> String {
        "ipc://" + NSTemporaryDirectory() + "reactorbus-unreachable-\(UUID().uuidString)"
    }

    @Test func aFullWindowHoldsTheNextActionUntilAnAckFreesASlot() async throws {
        try await FakeClientAuthority.with(handler: { _, _ in .ignore }) { context, fake in
            let client = try makeClient(fake, context, window: 2)
            defer { client.close() }
            try await withThrowingTaskGroup(of: ActionAck.self) { group in
                for _ in 0..<3 { group.addTask { try await client.send(.countUp) } }
                #expect(await fake.eventually { $0.actions.count == 2 })
                #expect(await FakeClientAuthority.eventually { client.diagnostics.value.queued == 1 })
                fake.answer(.ack(clientSeq: 1, actionSeq: 1, version: 1))
                #expect(await fake.eventually { $0.actionsReceivedAtLastAnswer != nil })
                #expect(fake.recorded.actionsReceivedAtLastAnswer == 2, "the third action went out before a slot was free")
                #expect(await fake.eventually { $0.actions.count == 3 })
                #expect(fake.recorded.actions.map(\.clientSeq) == [1, 2, 3])
                fake.answer(.ack(clientSeq: 2, actionSeq: 2, version: 2))
                fake.answer(.ack(clientSeq: 3, actionSeq: 3, version: 3))
                var acked: [UInt64] = []
                for try await ack in group { acked.append(ack.clientSeq) }
                #expect(acked.sorted() == [1, 2, 3])
            }
        }
    }

    @Test func aThousandConcurrentSendsAreEachAckedExactlyOnce() async throws {
        try await FakeClientAuthority.with { context, fake in
            let client = try makeClient(fake, context)
            defer { client.close() }
            let count = 1_000
            let acks = try await withThrowingTaskGroup(of: ActionAck.self) { group in
                for _ in 0..<count { group.addTask { try await client.send(.countUp) } }
                var acks: [ActionAck] = []
                for try await ack in group { acks.append(ack) }
                return acks
            }
            #expect(acks.count == count)
            #expect(Set(acks.map(\.clientSeq)) == Set(1...UInt64(count)))
            #expect(Set(acks.map(\.actionSeq)).count == count)
            let record = fake.recorded
            #expect(record.actions.count == count, "no action was resent")
            #expect(record.acksSent.count == count && record.acksSent.values.allSatisfy { $0 == 1 })
            #expect(client.diagnostics.value.lateAnswers == 0)
        }
    }

    @Test func snapshotPingAndStatsRoundTrip() async throws {
        try await FakeClientAuthority.with { context, fake in
            let state = try MessagePackEncoder().encode(Counter.State(count: 42))
            fake.setSnapshot(version: 42, actionSeq: 40, payload: state)
            fake.setCounters(["accepted": 40, "malformed": 2])
            let client = try makeClient(fake, context)
            defer { client.close() }
            #expect(try await client.snapshot() == Snapshot(version: 42, state: Counter.State(count: 42)))
            let raw = try await client.snapshotPayload()
            #expect(raw.version == 42 && raw.actionSeq == 40 && raw.app == "counter" && raw.payload == state)
            #expect(try await client.ping() == 42)
            #expect(try await client.stats() == ["accepted": 40, "malformed": 2])
            let requests = fake.recorded.received.compactMap { message -> UInt64? in
                switch message {
                case .snapshot(let id), .ping(let id), .stats(let id), .snapshotChunk(let id, _, _, _): id
                case .action, .features: nil
                }
            }
            // Four calls plus the ping the client sends on connecting, to learn the start id.
            #expect(requests.count == 5 && Set(requests).count == 5, "every request has its own id")
        }
    }

    @Test func aStateThatDoesNotDecodeIsABadReply() async throws {
        try await FakeClientAuthority.with { context, fake in
            fake.setSnapshot(version: 1, actionSeq: 1, payload: try MessagePackEncoder().encode(["nope": "x"]))
            let client = try makeClient(fake, context)
            defer { client.close() }
            do throws(ClientError) {
                _ = try await client.snapshot()
                Issue.record("expected a bad reply")
            } catch {
                guard case .badReply = error else { Issue.record("got \(error)"); return }
            }
        }
    }

    @Test func closeFailsPendingCallsAndLaterCalls() async throws {
        try await FakeClientAuthority.with(handler: { _, _ in .ignore }) { context, fake in
            let client = try makeClient(fake, context)
            let pending = Task { try await client.send(.countUp) }
            #expect(await fake.eventually { $0.actions.count == 1 })
            client.close()
            client.close()
            await #expect(throws: ClientError.closed) { try await pending.value }
            await #expect(throws: ClientError.closed) { try await client.send(.countUp) }
            await #expect(throws: ClientError.closed) { try await client.ping() }
            await client.wait()
        }
    }

    @Test func callsBeforeStartFailAsClosed() async throws {
        let context = try ZMQContext()
        let client = try ActionClient<Counter>(configuration: .init(actionsEndpoint: "tcp://127.0.0.1:1"), logger: quietLogger, context: context)
        await #expect(throws: ClientError.closed) { try await client.send(.countUp) }
        client.close()
        #expect(throws: ClientError.closed) { try client.start() }
        #expect(context.terminate(timeout: promptly))
    }

    @Test func invalidConfigurationsAndEndpointsAreRefused() throws {
        let context = try ZMQContext()
        defer { #expect(context.terminate(timeout: promptly)) }
        #expect(throws: ClientError.self) {
            _ = try ActionClient<Counter>(configuration: .init(actionsEndpoint: "tcp://127.0.0.1:1", clientID: ""), context: context)
        }
        #expect(throws: ClientError.self) {
            _ = try ActionClient<Counter>(configuration: .init(actionsEndpoint: "tcp://127.0.0.1:1", clientID: String(repeating: "x", count: 65)), context: context)
        }
        let client = try ActionClient<Counter>(configuration: .init(actionsEndpoint: "nonsense://x"), logger: quietLogger, context: context)
        do throws(ClientError) {
            try client.start()
            Issue.record("expected a transport error")
        } catch {
            guard case .transport = error else { Issue.record("got \(error)"); return }
        }
        #expect(try ActionClient<Counter>(configuration: .init(actionsEndpoint: "x", window: 100_000), context: context).configuration.window == 4_096)
    }
}

/// Logs only errors, so expected warnings (timeouts, bad replies) do not clutter test output.
let quietLogger = Logger(label: "test", level: .error)

extension ActionClientTests {
    /// A client given the app's schema meets an authority of another version (the fake says
    /// schema 1, the client speaks 2): its first call and every later one fail with the refusal,
    /// naming both versions; nothing is sent but pings.
    @Test func anAuthorityOfAnotherSchemaRefusesEveryCallEvenAfterTheClientStopped() async throws {
        try await FakeClientAuthority.with { context, fake in
            let client = try makeClient(fake, context) { $0.schema = AppSchema(version: 2) }
            defer { client.close() }
            let expected = ClientError.refused(code: .wrongApp, message: AppSchema(version: 2).disagreement(app: "counter", endpoint: fake.actionsEndpoint, authority: 1))
            await #expect(throws: expected) { try await client.send(.countUp) }
            await client.wait()
            await #expect(throws: expected) { try await client.send(.countUp) }
            await #expect(throws: expected) { _ = try await client.stats() }
            #expect(fake.recorded.actions.isEmpty)
            #expect(fake.recorded.received.allSatisfy { if case .ping = $0 { true } else { false } })
        }
    }
}
