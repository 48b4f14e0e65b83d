import Foundation
import MessagePack
import ReactorApps
import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing
import TestSupport
import ZeroMQ

/// States far above the default 1 MiB `--max-message-bytes` travel end to end: to a late-joining
/// observer (in chunks, then mutations applied with the reactor), to `observe --once`, and across
/// a restart from disk; and a message over the limit the authority does apply gets a clear error.
@Suite(.serialized) struct LargeStateTests {
    /// 60,000 entries of 100 bytes each: about 6.5 MiB of MessagePack.
    static let fills: [Catalog.Action] = (0..<6).map { .fill(from: $0 * 10_000, count: 10_000, bytes: 100) }

    private func expectedState(_ actions: [Catalog.Action]) -> Catalog.State {
        let reactor = Catalog()
        var state = reactor.initialState
        for action in actions {
            for mutation in reactor.mutate(state: state, action: action).sync { reactor.reduce(state: &state, mutation: mutation) }
        }
        return state
    }

    private func send(_ actions: [Catalog.Action], to endpoint: String, context: ZMQContext) async throws {
        let client = try ActionClient<Catalog>(configuration: ActionClientConfiguration(actionsEndpoint: endpoint, timeout: .seconds(10)),
                                               logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        defer { client.close() }
        for action in actions { _ = try await client.send(action) }
    }

    /// The state `observe --once --json` prints, decoded back through MessagePack as the app's state.
    private func observeOnce(_ cluster: ClusterProcesses) async throws -> (version: UInt64, state: Catalog.State) {
        let observe = try ChildProcess.node(["observe", "--app", "catalog", "--feed", cluster.endpoints.feed, "--actions", cluster.endpoints.actions,
                                             "--once", "--json", "--timeout", "20"], name: "observe-once")
        #expect(await observe.waitForExit(timeout: .seconds(30)) == 0, "\(observe.diagnostics)")
        let line = try #require(observe.output.first)
        let value = try MessagePackValue(jsonText: line)
        guard case .map(let fields) = value,
              case .uint(let version)? = fields.first(where: { $0.key == .string("version") })?.value,
              let state = fields.first(where: { $0.key == .string("state") })?.value else {
            Issue.record("observe printed \(line.prefix(200))")
            throw CancellationError()
        }
        return (version, try MessagePackDecoder().decode(Catalog.State.self, from: state.pack()))
    }

    @Test(.timeLimit(.minutes(2))) func aStateOfSeveralMiBReachesLateJoinersAndObserveAndSurvivesARestart() async throws {
        let directory = NSTemporaryDirectory() + "reactorbus-large-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }

        var cluster = try await ClusterProcesses(app: "catalog", extra: ["--data", directory])
        try await send(Self.fills, to: cluster.endpoints.actions, context: context)
        var expected = expectedState(Self.fills)
        let encoded = try MessagePackEncoder().encode(expected)
        #expect(encoded.count > 6 << 20, "the state is \(encoded.count) bytes")

        // A late joiner with the reactor: the fetched state, then mutations applied by reduce.
        let observer = try Observer<Catalog>(reactor: Catalog(), configuration: ObserverConfiguration(feedEndpoint: cluster.endpoints.feed, actionsEndpoint: cluster.endpoints.actions),
                                             logger: Logger(label: "observer", sink: .discard), context: context)
        var snapshots = observer.snapshots().makeAsyncIterator()
        try observer.start()
        defer { observer.stop() }
        let first = try #require(await snapshots.next())
        #expect(first.version == 6)
        #expect(first.state == expected)
        let more: [Catalog.Action] = [.put(key: 7, value: "seven"), .fill(from: 60_000, count: 100, bytes: 10)]
        try await send(more, to: cluster.endpoints.actions, context: context)
        expected = expectedState(Self.fills + more)
        var latest = first
        while latest.version < 8, let next = await snapshots.next() { latest = next }
        #expect(latest.version == 8)
        #expect(latest.state == expected)
        #expect(observer.metrics.refetches == 0)

        // `observe --once` fetches it in chunks too.
        let observed = try await observeOnce(cluster)
        #expect(observed.version == 8)
        #expect(observed.state == expected)
        let stats = try await cluster.stats()
        #expect(stats["snapshot_chunks"] ?? 0 >= 2 * UInt64(encoded.count >> 20))

        // A restart from disk: the final snapshot and the journal give back the same state.
        cluster.authority.signal(SIGTERM)
        #expect(await cluster.authority.waitForExit(timeout: .seconds(20)) == 0, "\(cluster.authority.diagnostics)")
        cluster = try await ClusterProcesses(app: "catalog", extra: ["--data", directory])
        let restored = try await observeOnce(cluster)
        #expect(restored.version == 8)
        #expect(restored.state == expected)
        await cluster.stop()
    }

    @Test func anActionOverTheLimitGetsAClearErrorAndIsCounted() async throws {
        let cluster = try await ClusterProcesses(app: "catalog", extra: ["--max-message-bytes", "65536"])
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        var configuration = ActionClientConfiguration(actionsEndpoint: cluster.endpoints.actions, timeout: .seconds(10))
        configuration.maxMessageBytes = 1 << 20
        let client = try ActionClient<Catalog>(configuration: configuration, logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        let big = String(repeating: "x", count: 100_000)
        var refusal: ClientError?
        do {
            _ = try await client.send(.put(key: 1, value: big))
        } catch {
            refusal = error
        }
        // Something small still goes through: the connection was not reset.
        let ack = try await client.send(.put(key: 2, value: "small"))
        client.close()
        guard case .refused(.tooLarge, let message)? = refusal else {
            Issue.record("expected too_large, got \(String(describing: refusal))")
            await cluster.stop()
            return
        }
        #expect(message.contains("over the authority's limit of 65536 bytes (--max-message-bytes)"), "\(message)")
        #expect(ack.actionSeq == 1)
        let stats = try await cluster.stats()
        #expect(stats["messages_too_large"] == 1)
        #expect(stats["actions_accepted"] == 1)
        await cluster.stop()
        let log = (try? String(contentsOfFile: cluster.authority.logPath, encoding: .utf8)) ?? ""
        let logged = log.split(separator: "\n").filter { $0.contains("--max-message-bytes") }
        #expect(logged.count == 1, "\(cluster.authority.diagnostics)")
        #expect(logged.first?.contains("over the authority's limit of 65536 bytes") == true)
    }
}
