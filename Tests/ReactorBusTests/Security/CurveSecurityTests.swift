import Foundation
import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorLog
import ReactorWire
import Synchronization
import Testing
import ZeroMQ

/// CURVE on every authority socket, with per-socket allowlists checked by the ZAP handler.
@Suite(.serialized) struct CurveSecurityTests {
    struct Setup {
        let context: ZMQContext
        let node: AuthorityNode<Counter>
        let endpoints: AuthorityNode<Counter>.Endpoints
        let server: ZMQCurve.KeyPair
        let client: ZMQCurve.KeyPair
        let observer: ZMQCurve.KeyPair
        let directory: String
        let log: LogCapture
    }

    func start() async throws -> Setup {
        let context = try ZMQContext()
        let server = try ZMQCurve.generateKeyPair()
        let client = try ZMQCurve.generateKeyPair()
        let observer = try ZMQCurve.generateKeyPair()
        let directory = NSTemporaryDirectory() + "allow-\(UUID().uuidString)"
        for domain in ["actions", "workers", "feed"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + domain, withIntermediateDirectories: true)
        }
        _ = try CurveKeyFile.write(client, prefix: directory + "/actions/client")
        try FileManager.default.removeItem(atPath: directory + "/actions/client.key")
        _ = try CurveKeyFile.write(observer, prefix: directory + "/feed/observer")
        try FileManager.default.removeItem(atPath: directory + "/feed/observer.key")
        var configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "tcp://127.0.0.1:*", workersEndpoint: "tcp://127.0.0.1:*", feedEndpoint: "tcp://127.0.0.1:*")
        configuration.security = try AuthoritySecurity(secretKey: server.secretKey, allowKeysDirectory: directory)
        let log = LogCapture()
        let logger = log.logger("authority")
        let node = try AuthorityNode(reactor: Counter(), configuration: configuration, logger: logger, context: context)
        let endpoints = try await node.start()
        return Setup(context: context, node: node, endpoints: endpoints, server: server, client: client, observer: observer, directory: directory, log: log)
    }

    func finish(_ setup: Setup) async {
        setup.node.stop()
        await setup.node.wait()
        #expect(setup.context.terminate(timeout: .seconds(5)))
        try? FileManager.default.removeItem(atPath: setup.directory)
    }

    /// Sends one countUp from a DEALER with `security` and waits up to `wait` for an answer.
    func tryAction(_ setup: Setup, security: ClientSecurity?, endpoint: String? = nil, wait: Int = 1_500) throws -> [[UInt8]]? {
        let socket = try ZMQSocket(context: setup.context, type: .dealer)
        defer { socket.close() }
        try socket.set(.linger, 0)
        try security?.apply(to: socket)
        try socket.connect(endpoint ?? setup.endpoints.actions)
        let payload = try MessagePackEncoder().encode(Counter.Action.countUp)
        _ = try socket.trySend(ClientMessage.action(clientID: "t", clientSeq: 1, payload: payload).frames(HeaderWriter()))
        let poller = ZMQPoller()
        _ = try poller.register(socket)
        guard try poller.poll(timeout: wait) > 0 else { return nil }
        return try socket.tryReceiveMultipart()
    }

    @Test func anAllowedClientIsServed() async throws {
        let setup = try await start()
        let reply = try tryAction(setup, security: ClientSecurity(serverKey: setup.server.publicKey, secretKey: setup.client.secretKey), wait: 5_000)
        let frames = try #require(reply)
        #expect(try AuthorityReply(frames: frames) == .ack(clientSeq: 1, actionSeq: 1, version: 1))
        await finish(setup)
    }

    @Test func noKeysWrongServerKeyOrAKeyNotAllowedGetNothingThrough() async throws {
        let setup = try await start()
        let stranger = try ZMQCurve.generateKeyPair()
        let wrongServer = try ZMQCurve.generateKeyPair()
        #expect(try tryAction(setup, security: nil) == nil)
        #expect(try tryAction(setup, security: ClientSecurity(serverKey: wrongServer.publicKey, secretKey: setup.client.secretKey)) == nil)
        #expect(try tryAction(setup, security: ClientSecurity(serverKey: setup.server.publicKey, secretKey: stranger.secretKey)) == nil)
        // An observer's key is allowed on the feed only: it cannot send actions.
        #expect(try tryAction(setup, security: ClientSecurity(serverKey: setup.server.publicKey, secretKey: setup.observer.secretKey)) == nil)
        let metrics = setup.node.metrics
        #expect(metrics.version == 0)
        #expect(metrics[.actionsAccepted] == 0)
        let lines = setup.log.all
        #expect(lines.contains { $0.contains("refused client key \(stranger.publicKey)") && $0.contains("actions socket") })
        #expect(lines.contains { $0.contains("refused client key \(setup.observer.publicKey)") })
        #expect(lines.contains { $0.contains("refused a peer on the actions socket") })
        await finish(setup)
    }

    @Test func anObserversKeyCannotRegisterAsAWorker() async throws {
        let setup = try await start()
        let socket = try ZMQSocket(context: setup.context, type: .dealer)
        try socket.set(.linger, 0)
        try ClientSecurity(serverKey: setup.server.publicKey, secretKey: setup.observer.secretKey).apply(to: socket)
        try socket.connect(setup.endpoints.workers)
        _ = try socket.trySend(WorkerMessage.ready(name: "spy", app: "counter", capacity: 1, kinds: []).frames(HeaderWriter()))
        let poller = ZMQPoller()
        _ = try poller.register(socket)
        #expect(try poller.poll(timeout: 1_500) == 0)
        #expect(setup.node.metrics[.workersRegistered] == 0)
        socket.close()
        await finish(setup)
    }
}
