import Foundation
import MessagePack
import ReactorApps
import ReactorCore
import ReactorLog
import Synchronization
import Testing
@testable import ReactorBus

@Suite struct ActionClientTests {
    private func makeClient(
        _ fake: FakeClientAuthority, _ context: ZMQContext, clientID: String? = nil,
        timeout: Duration = .seconds(5), retries: Int = 3, window: Int = 1_000
    ) throws -> ActionClient<Counter> {
        var configuration = ActionClientConfiguration(actionsEndpoint: fake.actionsEndpoint, timeout: timeout, retries: retries, window: window)
        if let clientID { configuration.clientID = clientID }
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
            #expect(await FakeClientAuthority.eventually { client.diagnostics.actionSends.load(ordering: .relaxed) == 3 })
        }
    }

    @Test func anErrorReplyFailsTheSendWithTheRefusal() async throws {
        let handler: FakeClientAuthority.Handler = { message, _ in
            guard case .action(_, let seq, _) = message else { return .answer }
            return .reply([.error(ref: seq, code: .busy, message: "too many actions in flight")])
        }
        try await FakeClientAuthority.with(handler: handler) { context, fake in
            let client = try makeClient(fake, context)
            defer { client.close() }
            do throws(ClientError) {
                _ = try await client.send(.countUp)
                Issue.record("expected a refusal")
            } catch {
                #expect(error == .refused(code: .busy, message: "too many actions in flight"))
                #expect(error.description.contains("busy"))
                #expect(error.description.contains("retry later"))
            }
            #expect(fake.recorded.actions.count == 1, "a refusal is not retried")
        }
    }

    @Test func aFullWindowHoldsTheNextActionUntilAnAckFreesASlot() async throws {
        try await FakeClientAuthority.with(handler: { _, _ in .ignore }) { context, fake in
            let client = try makeClient(fake, context, window: 2)
            defer { client.close() }
            try await withThrowingTaskGroup(of: ActionAck.self) { group in
                for _ in 0..<3 { group.addTask { try await client.send(.countUp) } }
                #expect(await fake.eventually { $0.actions.count == 2 })
                #expect(await FakeClientAuthority.eventually { client.diagnostics.queued.load(ordering: .relaxed) == 1 })
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
            #expect(client.diagnostics.lateAnswers.load(ordering: .relaxed) == 0)
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
                case .snapshot(let id), .ping(let id), .stats(let id): id
                case .action: nil
                }
            }
            #expect(requests.count == 4 && Set(requests).count == 4, "every request has its own id")
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
