import Foundation
import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import Testing
import ZeroMQ
import TestSupport

/// Lists of authority endpoints: parsing, the order they are tried in, the messages for bad
/// entries, the term check, and the client's and observer's moves between two fake authorities.
@Suite struct AuthorityEndpointsTests {
    @Test func oneEndpointIsKeptAsGivenAndNeverLeft() {
        var endpoints = AuthorityEndpoints("tcp://127.0.0.1:7001")
        #expect(endpoints.all == ["tcp://127.0.0.1:7001"])
        #expect(!endpoints.isList)
        #expect(endpoints.advance() == "tcp://127.0.0.1:7001")
        #expect(AuthorityEndpoints.problem(in: "not an endpoint", setting: "actionsEndpoint") == nil, "one endpoint is ZeroMQ's to judge, as before")
    }

    @Test func aListIsTriedInOrderRoundRobin() {
        var endpoints = AuthorityEndpoints(" tcp://127.0.0.1:7001 ,ipc:///tmp/b ,inproc://c")
        #expect(endpoints.all == ["tcp://127.0.0.1:7001", "ipc:///tmp/b", "inproc://c"])
        #expect(endpoints.isList)
        #expect(endpoints.current == "tcp://127.0.0.1:7001")
        #expect([endpoints.advance(), endpoints.advance(), endpoints.advance(), endpoints.advance()] == ["ipc:///tmp/b", "inproc://c", "tcp://127.0.0.1:7001", "ipc:///tmp/b"])
        #expect(AuthorityEndpoints.problem(in: " tcp://127.0.0.1:7001 ,ipc:///tmp/b ,inproc://c", setting: "actionsEndpoint") == nil)
    }

    @Test func aBadEntryIsNamed() {
        #expect(AuthorityEndpoints.problem(in: "tcp://127.0.0.1:7001,,tcp://127.0.0.1:8001", setting: "feedEndpoint")
                == "feedEndpoint 'tcp://127.0.0.1:7001,,tcp://127.0.0.1:8001': entry 2 '' is empty; separate endpoints with single commas")
        #expect(AuthorityEndpoints.problem(in: "tcp://127.0.0.1:7001,127.0.0.1:8001", setting: "authorityEndpoint")
                == "authorityEndpoint 'tcp://127.0.0.1:7001,127.0.0.1:8001': entry 2 '127.0.0.1:8001' is not an endpoint (e.g. tcp://127.0.0.1:7001)")
        #expect(AuthorityEndpoints.problem(in: "://x,tcp://127.0.0.1:8001", setting: "actionsEndpoint")
                == "actionsEndpoint '://x,tcp://127.0.0.1:8001': entry 1 '://x' is not an endpoint (e.g. tcp://127.0.0.1:7001)")
        #expect(AuthorityEndpoints.problem(in: "tcp://127.0.0.1:7001,udp://127.0.0.1:8001", setting: "actionsEndpoint")
                == "actionsEndpoint 'tcp://127.0.0.1:7001,udp://127.0.0.1:8001': entry 2 'udp://127.0.0.1:8001' has transport 'udp'; use tcp, ipc or inproc")
    }

    @Test func nodesRefuseABadListBeforeConnecting() async throws {
        let context = try ZMQContext()
        defer { #expect(context.terminate(timeout: promptly)) }
        let list = "tcp://127.0.0.1:1,tcp://"
        #expect(throws: ClientError.invalidArgument("actionsEndpoint '\(list)': entry 2 'tcp://' is not an endpoint (e.g. tcp://127.0.0.1:7001)")) {
            _ = try ActionClient<Counter>(configuration: .init(actionsEndpoint: list), logger: quietLogger, context: context)
        }
        let worker = WorkerNode(reactor: Counter(), effects: CounterEffects(),
                                configuration: WorkerConfiguration(authorityEndpoint: list, appName: "counter"), logger: quietLogger, context: context)
        #expect(throws: ZMQError(code: ZMQError.Code.invalidArgument, function: "zmq_connect", endpoint: list)) { try worker.start() }
        await worker.wait()
        // Feed and actions endpoints pair up: as many of each.
        let observer = try Observer<Counter>(configuration: ObserverConfiguration(feedEndpoint: "tcp://127.0.0.1:1,tcp://127.0.0.1:2", actionsEndpoint: "tcp://127.0.0.1:1"),
                                             logger: quietLogger, context: context)
        #expect(throws: ZMQError(code: ZMQError.Code.invalidArgument, function: "zmq_connect", endpoint: "tcp://127.0.0.1:1,tcp://127.0.0.1:2")) { try observer.start() }
        await observer.wait()
    }

    @Test func anOlderTermIsNotTrustedOnceANewerOneWasSeen() {
        var watch = AuthorityTermWatch()
        #expect(watch.check(nil) == .trusted)
        #expect(watch.highest == nil)
        #expect(watch.check(5) == .trusted)
        #expect(watch.check(7) == .trusted)
        #expect(watch.check(7) == .trusted)
        #expect(watch.check(6) == .older(term: 6, highest: 7))
        #expect(watch.check(nil) == .trusted)
        #expect(watch.highest == 7)
    }

    /// A hung authority: the connection is up, nothing is answered (not even the ping sent on
    /// connecting). The client moves on after the ping's timeout and resends there.
    @Test func aClientLeavesAnAuthorityThatDoesNotAnswerItsPingAndResendsUnderTheSameSeq() async throws {
        try await FakeClientAuthority.with(handler: { _, _ in .ignore }) { context, hung in
            let next = try await FakeClientAuthority.start(context: context)
            var configuration = ActionClientConfiguration(actionsEndpoint: "\(hung.actionsEndpoint),\(next.actionsEndpoint)",
                                                          clientID: "failover-client", timeout: .milliseconds(300), retries: 20)
            configuration.failoverAfter = .milliseconds(200)
            let client = try ActionClient<Counter>(configuration: configuration, logger: quietLogger, context: context)
            try client.start()
            let ack = try await client.send(.countUp)
            #expect(ack.clientSeq == 1)
            #expect(hung.recorded.actions.map(\.clientSeq).allSatisfy { $0 == 1 } && !hung.recorded.actions.isEmpty)
            #expect(next.recorded.actions.map(\.clientID) == ["failover-client"])
            #expect(next.recorded.actions.map(\.clientSeq) == [1])
            #expect(await FakeClientAuthority.eventually { client.diagnostics.value.failovers == 1 })
            // Later actions go to the authority that answers, numbered on.
            #expect(try await client.send(.countUp).clientSeq == 2)
            #expect(next.recorded.actions.map(\.clientSeq) == [1, 2])
            client.close()
            await client.wait()
            await next.stop()
        }
    }

    /// An authority whose journal failed refuses actions `unavailable` and stops; with another
    /// authority to go to, the client keeps the action and resends it there.
    @Test func anActionRefusedUnavailableIsResentToTheNextAuthorityNotFailed() async throws {
        try await FakeClientAuthority.with(handler: { message, _ in
            guard case .action(_, let seq, _) = message else { return .answer }
            return .reply([.error(ref: seq, code: .unavailable, message: "the journal failed")])
        }) { context, failing in
            let next = try await FakeClientAuthority.start(context: context)
            let client = try ActionClient<Counter>(configuration: .init(actionsEndpoint: "\(failing.actionsEndpoint),\(next.actionsEndpoint)"),
                                                   logger: quietLogger, context: context)
            try client.start()
            #expect(try await client.send(.countUp).clientSeq == 1)
            #expect(failing.recorded.actions.map(\.clientSeq) == [1])
            #expect(next.recorded.actions.map(\.clientSeq) == [1])
            #expect(await FakeClientAuthority.eventually { client.diagnostics.value.failovers == 1 })
            client.close()
            await client.wait()
            await next.stop()
        }
        // With one endpoint the refusal is the answer, as before.
        try await FakeClientAuthority.with(handler: { message, _ in
            guard case .action(_, let seq, _) = message else { return .answer }
            return .reply([.error(ref: seq, code: .unavailable, message: "the journal failed")])
        }) { context, failing in
            let client = try ActionClient<Counter>(configuration: .init(actionsEndpoint: failing.actionsEndpoint), logger: quietLogger, context: context)
            try client.start()
            await #expect(throws: ClientError.refused(code: .unavailable, message: "the journal failed")) { try await client.send(.countUp) }
            client.close()
            await client.wait()
        }
    }

    @Test func aClientThatCannotConnectToTheFirstEndpointUsesTheNext() async throws {
        try await FakeClientAuthority.with { context, fake in
            var configuration = ActionClientConfiguration(actionsEndpoint: "tcp://127.0.0.1:1,\(fake.actionsEndpoint)")
            configuration.failoverAfter = .milliseconds(100)
            let client = try ActionClient<Counter>(configuration: configuration, logger: quietLogger, context: context)
            try client.start()
            #expect(try await client.send(.countUp).clientSeq == 1)
            #expect(fake.recorded.actions.map(\.clientSeq) == [1])
            #expect(await FakeClientAuthority.eventually { client.diagnostics.value.failovers == 1 && client.diagnostics.value.connections == 1 })
            client.close()
            await client.wait()
        }
    }

    /// A worker whose authority fell silent says `ready` to the next one, not to the same one.
    @Test func aWorkerWhoseAuthorityFallsSilentRegistersWithTheNext() async throws {
        let context = try ZMQContext()
        let first = try FakeWorkerAuthority(context: context)
        let second = try FakeWorkerAuthority(context: context)
        let configuration = WorkerConfiguration(authorityEndpoint: "\(first.endpoint),\(second.endpoint)", appName: "test", name: "w-failover",
                                                concurrency: 2, prefetch: 0, heartbeatInterval: .milliseconds(300))
        let worker = WorkerNode(reactor: Counter(), effects: CounterEffects(), configuration: configuration, logger: quietLogger, context: context)
        try worker.start()
        _ = try await first.register(heartbeatMilliseconds: 300)
        #expect(await eventually { worker.metrics.isRegistered })
        first.setAnswersHeartbeats(false)
        let ready = try #require(await second.next(within: .seconds(10)))
        #expect(ready.message == .ready(name: "w-failover", app: "test", capacity: 2, kinds: []))
        second.send(.welcome(heartbeatMilliseconds: 300), to: ready.peer)
        #expect(await eventually { worker.metrics.isRegistered })
        let metrics = worker.metrics
        #expect(metrics.failovers == 1)
        #expect(metrics.reconnects == 1)
        #expect(metrics.registrations == 2)
        #expect(first.unread.isEmpty, "no second ready to the silent authority: \(first.unread.map(\.message))")
        worker.stop()
        worker.stop()
        #expect(await finishes(worker))
        first.close()
        second.close()
        #expect(context.terminate(timeout: promptly))
    }

    @Test func anObserverWhoseFeedFallsSilentFetchesFromTheNextAuthority() async throws {
        try await FakeClientAuthority.with { context, first in
            let second = try await FakeClientAuthority.start(context: context)
            first.setSnapshot(version: 5, actionSeq: 5, payload: try MessagePackEncoder().encode(Counter.State(count: 5)))
            second.setSnapshot(version: 7, actionSeq: 7, payload: try MessagePackEncoder().encode(Counter.State(count: 7)))
            let configuration = ObserverConfiguration(feedEndpoint: "\(first.feedEndpoint),\(second.feedEndpoint)",
                                                      actionsEndpoint: "\(first.actionsEndpoint),\(second.actionsEndpoint)",
                                                      silenceTimeout: .seconds(2))
            let observer = try Observer<Counter>(configuration: configuration, logger: quietLogger, context: context)
            let delivered = Box<[Snapshot<Counter.State>]>([])
            let reader = Task { for await snapshot in observer.snapshots() { delivered.value.append(snapshot) } }
            try observer.start()
            // The first authority's state is delivered unless the machine is so loaded that its
            // feed counts as silent before its snapshot arrives; either way the observer ends on
            // the second's, and never goes back.
            #expect(await FakeClientAuthority.eventually(within: .seconds(10)) { delivered.value.last?.version == 7 })
            #expect([[5, 7], [7]].contains(delivered.value.map(\.version)), "\(delivered.value.map(\.version))")
            #expect([[5, 7], [7]].contains(delivered.value.map(\.state.count)))
            #expect(first.recorded.snapshotRequests >= 1)
            #expect(second.recorded.snapshotRequests >= 1)
            #expect(observer.metrics.failovers >= 1)
            observer.stop()
            await observer.wait()
            await reader.value
            await second.stop()
        }
    }
}
