import Foundation
import ReactorApps
import ReactorBus
import ReactorLog
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Exactly-once for clients the authority had to forget, with the real binary and a restart.
@Suite(.spawnsProcesses) struct ForgottenClientTests {
    func send(_ count: Int, as clientID: String, to actions: String, context: ZMQContext) async -> [Result<ActionAck, ClientError>] {
        do {
            let client = try ActionClient<Counter>(
                configuration: ActionClientConfiguration(actionsEndpoint: actions, clientID: clientID, timeout: .seconds(2), retries: 5, window: 1),
                logger: Logger(label: "client", sink: .discard), context: context)
            try client.start()
            defer { client.close() }
            var results: [Result<ActionAck, ClientError>] = []
            for _ in 0..<count {
                do { results.append(.success(try await client.send(.countUp))) } catch { results.append(.failure(error)) }
            }
            return results
        } catch {
            return [.failure(.invalidArgument("\(error)"))]
        }
    }

    @Test func aForgottenClientsResendIsRefusedAfterACrashAndNothingIsAppliedTwice() async throws {
        let directory = NSTemporaryDirectory() + "reactorbus-forgotten-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = ["authority", "--app", "counter", "--data", directory, "--max-clients", "20", "--remembered-acks", "2"]
        var node = try ChildProcess.node(arguments + ["--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"], name: "authority")
        let endpoints = try await node.endpoints()
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }

        let early = await send(3, as: "early", to: endpoints.actions, context: context)
        #expect(early.map { (try? $0.get())?.actionSeq } == [1, 2, 3])
        for index in 1...40 {
            let results = await send(1, as: "other-\(index)", to: endpoints.actions, context: context)
            #expect((try? results.first?.get())?.actionSeq == UInt64(3 + index))
        }
        let before = try await WireProbe(actions: endpoints.actions).stats()
        #expect(before["clients"] == 20 && before["clients_forgotten"] == 21, "\(before)")
        // A crash: no final snapshot, so the restart rebuilds the ledger from the journal alone.
        node.signal(SIGKILL)
        #expect(await node.waitForExit() != 0)
        node = try ChildProcess.node(arguments + ["--actions", endpoints.actions, "--workers", endpoints.workers, "--feed", endpoints.feed], name: "authority")
        _ = try await node.endpoints()

        // The same client id starts over at client_seq 1, as a restarted client process would.
        let resent = await send(1, as: "early", to: endpoints.actions, context: context)
        guard case .failure(.refused(let code, let message))? = resent.first else {
            Issue.record("expected a refusal, got \(resent)\n\(node.diagnostics)")
            return
        }
        #expect(code == .unknownClient)
        #expect(message.contains("early") && message.contains("--max-clients"))
        // A client the ledger still knows gets its duplicate acked, not applied.
        let recent = await send(1, as: "other-40", to: endpoints.actions, context: context)
        #expect((try? recent.first?.get())?.actionSeq == 43)
        let stats = try await WireProbe(actions: endpoints.actions).stats()
        #expect(stats["version"] == 43)
        #expect(stats["action_seq"] == 43)
        #expect(stats["actions_unknown_client"] == 1)
        #expect(stats["actions_duplicate"] == 1)
        #expect((stats["clients"] ?? 0) <= 20)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }
}
