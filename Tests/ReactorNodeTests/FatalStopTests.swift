import Foundation
import ReactorApps
import ReactorBus
import ReactorLog
import ReactorWire
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Nodes that cannot go on stop with a non-zero, sysexits-style code and say why; clients are
/// told instead of left to time out.
@Suite(.spawnsProcesses) struct FatalStopTests {
    static let loopback = ["--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"]

    @Test func aWorkerRefusedForAnotherAppExits78() async throws {
        let authority = try ChildProcess.node(["authority", "--app", "counter"] + Self.loopback, name: "authority")
        let endpoints = try await authority.endpoints()
        let worker = try ChildProcess.node(["worker", "--app", "primes", "--authority", endpoints.workers, "--name", "misplaced"], name: "worker")
        #expect(await worker.waitForExit(timeout: .seconds(15)) == 78, "\(worker.diagnostics)")
        #expect(worker.diagnostics.contains("worker: stopped: wrong_app"), "\(worker.diagnostics)")
        authority.signal(SIGTERM)
        #expect(await authority.waitForExit() == 0)
    }

    @Test func anEndpointInUseIsNamedAndExits69() async throws {
        let first = try ChildProcess.node(["authority", "--app", "counter"] + Self.loopback, name: "first")
        let endpoints = try await first.endpoints()
        let second = try ChildProcess.node(["authority", "--app", "counter", "--actions", "tcp://127.0.0.1:*", "--workers", endpoints.workers, "--feed", "tcp://127.0.0.1:*"], name: "second")
        #expect(await second.waitForExit(timeout: .seconds(15)) == 69, "\(second.diagnostics)")
        #expect(second.diagnostics.contains("zmq_bind \(endpoints.workers): Address already in use"), "\(second.diagnostics)")
        #expect(second.output.isEmpty)
        first.signal(SIGTERM)
        #expect(await first.waitForExit() == 0)
    }

    @Test func anObserverOfAnotherAppStopsWithWrongAppBeforeDeliveringAnything() async throws {
        let authority = try ChildProcess.node(["authority", "--app", "counter"] + Self.loopback, name: "authority")
        let endpoints = try await authority.endpoints()
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        var configuration = ObserverConfiguration(feedEndpoint: endpoints.feed, actionsEndpoint: endpoints.actions)
        configuration.appName = "primes"
        let observer = try Observer<Primes>(configuration: configuration, logger: Logger(label: "observer", sink: .discard), context: context)
        let stream = observer.rawSnapshots()
        try observer.start()
        // Bounded: if the observer did not stop by itself, the watchdog stops it and the
        // expectations below fail instead of the test hanging.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(15))
            observer.stop()
        }
        var delivered = 0
        for await _ in stream { delivered += 1 }
        await observer.wait()
        watchdog.cancel()
        #expect(delivered == 0)
        let failure = try #require(observer.failure as? ProtocolError)
        #expect(failure.code == .wrongApp)
        #expect(failure.message == "the authority at \(endpoints.actions) serves app 'counter', not 'primes'")
        authority.signal(SIGTERM)
        #expect(await authority.waitForExit() == 0)
    }

    @Test func aClientOfAnotherAppSendsNothingAndFailsWithWrongApp() async throws {
        let authority = try ChildProcess.node(["authority", "--app", "counter"] + Self.loopback, name: "authority")
        let endpoints = try await authority.endpoints()
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        func client(_ app: String) throws -> ActionClient<Counter> {
            var configuration = ActionClientConfiguration(actionsEndpoint: endpoints.actions, timeout: .seconds(2), retries: 2)
            configuration.appName = app
            let client = try ActionClient<Counter>(configuration: configuration, logger: Logger(label: "client", sink: .discard), context: context)
            try client.start()
            return client
        }
        let wrong = try client("primes")
        await #expect(throws: ClientError.refused(code: .wrongApp, message: "the authority at \(endpoints.actions) serves app 'counter', not 'primes'")) {
            _ = try await wrong.send(.countUp)
        }
        #expect((wrong.failure as? ProtocolError)?.code == .wrongApp)
        wrong.close()
        await wrong.wait()
        let right = try client("counter")
        #expect(try await right.send(.countUp).actionSeq == 1)
        right.close()
        await right.wait()
        // The refused client's action never reached the authority.
        let stats = try await WireProbe(actions: endpoints.actions).stats()
        #expect(stats["actions_accepted"] == 1 && stats["bad_actions"] == 0)
        authority.signal(SIGTERM)
        #expect(await authority.waitForExit() == 0)
    }

    @Test func sendAndObserveForAnotherAppExit78AndSendNothing() async throws {
        let authority = try ChildProcess.node(["authority", "--app", "counter"] + Self.loopback, name: "authority")
        let endpoints = try await authority.endpoints()
        let send = try ChildProcess.node(["send", "--app", "primes", "--actions", endpoints.actions, "--repeat", "5", #"{"factor":{"n":12}}"#], name: "send")
        #expect(await send.waitForExit(timeout: .seconds(20)) == 78, "\(send.diagnostics)")
        #expect(send.diagnostics.contains("serves app 'counter', not 'primes'"), "\(send.diagnostics)")
        let observe = try ChildProcess.node(["observe", "--app", "primes", "--actions", endpoints.actions, "--feed", endpoints.feed], name: "observe")
        #expect(await observe.waitForExit(timeout: .seconds(20)) == 78, "\(observe.diagnostics)")
        #expect(observe.output.isEmpty)
        let stats = try await WireProbe(actions: endpoints.actions).stats()
        #expect(stats["actions_accepted"] == 0 && stats["bad_actions"] == 0)
        authority.signal(SIGTERM)
        #expect(await authority.waitForExit() == 0)
    }

    /// Mounting needs root; CI runs as root. Without it the test cannot run at all.
    static let canMount = geteuid() == 0

    @Test(.enabled(if: canMount)) func aFullDiskStopsTheAuthorityWith73AndClientsAreToldWhy() async throws {
        let mountPoint = NSTemporaryDirectory() + "reactorbus-full-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try ChildProcess.program(executable: "/bin/mount", arguments: ["-t", "tmpfs", "-o", "size=192k", "tmpfs", mountPoint], name: "mount")
        try #require(await mount.waitForExit() == 0, "cannot mount a tmpfs: \(mount.diagnostics)")
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = ["-l", mountPoint]
            try? umount.run()
            umount.waitUntilExit()
            try? FileManager.default.removeItem(atPath: mountPoint)
        }
        let directory = mountPoint + "/data"
        var authority = try ChildProcess.node(["authority", "--app", "counter", "--data", directory] + Self.loopback, name: "authority")
        let endpoints = try await authority.endpoints()

        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let client = try ActionClient<Counter>(
            configuration: ActionClientConfiguration(actionsEndpoint: endpoints.actions, timeout: .seconds(2), retries: 0, window: 16),
            logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        defer { client.close() }
        var acked = 0
        var refusal: (code: ErrorCode, message: String)?
        // 192 KiB hold a few thousand records of this app; the loop is bounded all the same.
        for _ in 0..<50_000 {
            do {
                _ = try await client.send(.countUp)
                acked += 1
            } catch .refused(let code, let message) {
                refusal = (code, message)
                break
            } catch {
                Issue.record("expected a refusal when the disk is full, got \(error)")
                break
            }
        }
        #expect(refusal?.code == .unavailable)
        #expect(refusal?.message.contains("cannot write its journal") == true, "\(String(describing: refusal))")
        #expect(await authority.waitForExit(timeout: .seconds(15)) == 73, "\(authority.diagnostics)")
        #expect(authority.diagnostics.contains("No space left on device"))
        #expect(acked > 100)

        // Restarted on the still-full disk: everything acknowledged is there, and the first
        // write stops it again with the same code, not a clean exit.
        authority = try ChildProcess.node(["authority", "--app", "counter", "--data", directory, "--actions", endpoints.actions,
                                           "--workers", endpoints.workers, "--feed", endpoints.feed], name: "authority")
        _ = try await authority.endpoints()
        let stats = try await WireProbe(actions: endpoints.actions).stats()
        #expect(stats["version"] ?? 0 >= UInt64(acked), "acked \(acked), recovered \(stats)")
        let again = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "200", "--timeout", "2", #"{"countUp":{}}"#], name: "send")
        #expect(await again.waitForExit(timeout: .seconds(60)) != 0)
        #expect(await authority.waitForExit(timeout: .seconds(15)) == 73, "\(authority.diagnostics)")
    }
}
