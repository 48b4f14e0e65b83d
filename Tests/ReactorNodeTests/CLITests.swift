import Foundation
import Testing
import TestSupport
import TestTraits

/// The command line itself: usage errors, help, graceful stop.
@Suite(.spawnsProcesses, .serialized) struct CLITests {
    @Test func wrongFlagsAndBadEndpointsAreOneLineUsageErrors() async throws {
        let cases: [([String], String)] = [
            (["authority", "--app", "counter", "--colour", "red"], "unknown option '--colour'"),
            (["authority", "--app", "counter", "--actions", "nonsense"], "--actions 'nonsense': not an endpoint"),
            (["authority", "--app", "counter", "--feed", "udp://x:1"], "unknown transport 'udp'"),
            (["authority", "--app", "nope", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"], "unknown app 'nope'"),
            (["worker", "--app", "counter", "--effect-threads", "fibers"], "worker: '--effect-threads fibers' must be loop or pool"),
            (["fly"], "unknown command 'fly'"),
            // The benchmark is its own program (reactor-bench), not a command of the operator's CLI.
            (["bench"], "unknown command 'bench'"),
            (["bench-peer", "client"], "unknown command 'bench-peer'"),
        ]
        for (arguments, message) in cases {
            let node = try ChildProcess.node(arguments)
            let status = await node.waitForExit(timeout: .seconds(10))
            #expect(status == 64, "\(arguments) exited \(String(describing: status))")
            let stderr = node.diagnostics
            #expect(stderr.contains(message), "\(arguments): \(stderr)")
            #expect(!stderr.contains("Fatal error"))
        }
    }

    /// An action the app does not have is refused before anything is sent (no authority is
    /// needed), naming the unknown case and the app's cases.
    @Test func sendNamesAnUnknownActionAndTheAppsActions() async throws {
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", "tcp://127.0.0.1:9", #"{"countUp":{}}"#, #"{"dance":{"steps":2}}"#])
        #expect(await send.waitForExit(timeout: .seconds(10)) == 64)
        let stderr = (try? String(contentsOfFile: send.logPath, encoding: .utf8)) ?? ""
        #expect(stderr == #"reactor-node: send: '{"dance":{"steps":2}}' is not an action of this app: 'dance' is not a case of Counter.Action; its cases are countUp, countUpAsync"# + "\n")
        #expect(send.output.isEmpty)
    }

    @Test func helpIsPrintedAndExitsZero() async throws {
        let node = try ChildProcess.node(["authority", "--help"])
        #expect(await node.waitForExit() == 0)
        #expect(node.output.first?.hasPrefix("reactor-node authority") == true)
        #expect(node.output.contains { $0.contains("env REACTOR_ACTIONS") })

        let overview = try ChildProcess.node(["--help"])
        #expect(await overview.waitForExit() == 0)
        let listed = overview.output.filter { $0.hasPrefix("  ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(listed == ["authority", "worker", "send", "observe", "run", "journal", "replay", "inspect", "keygen", "demo"], "\(overview.output)")
    }

    @Test func anAuthorityStopsGracefullyOnSIGTERM() async throws {
        let node = try ChildProcess.node(["authority", "--app", "counter", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"])
        _ = try await node.endpoints()
        node.signal(SIGTERM)
        #expect(await node.waitForExit(timeout: .seconds(10)) == 0, "\(node.diagnostics)")
        #expect(node.diagnostics.contains("stopping gracefully"))
    }

    @Test func environmentVariablesSetOptions() async throws {
        let node = try ChildProcess.node(["authority"], environment: [
            "REACTOR_APP": "counter", "REACTOR_ACTIONS": "tcp://127.0.0.1:*", "REACTOR_WORKERS": "tcp://127.0.0.1:*", "REACTOR_FEED": "tcp://127.0.0.1:*",
        ])
        let endpoints = try await node.endpoints()
        #expect(endpoints.actions.hasPrefix("tcp://127.0.0.1:"))
        node.signal(SIGINT)
        #expect(await node.waitForExit(timeout: .seconds(10)) == 0)
    }
}

/// CURVE from the command line: keygen, an authority with an allowlist, clients with and without keys.
@Suite(.spawnsProcesses, .serialized) struct CLISecurityTests {
    @Test func onlyAClientWithAnAllowedKeyGetsThrough() async throws {
        let directory = NSTemporaryDirectory() + "reactorbus-keys-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for folder in ["allow/actions", "allow/workers", "allow/feed"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + folder, withIntermediateDirectories: true)
        }
        for name in ["server", "client", "stranger"] {
            let keygen = try ChildProcess.node(["keygen", "--out", directory + "/" + name])
            #expect(await keygen.waitForExit() == 0)
        }
        try FileManager.default.copyItem(atPath: directory + "/client.pub", toPath: directory + "/allow/actions/client.pub")
        try FileManager.default.copyItem(atPath: directory + "/client.pub", toPath: directory + "/allow/feed/client.pub")
        let authority = try ChildProcess.node(["authority", "--app", "counter", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*",
                                               "--curve-secret-key", directory + "/server.key", "--allow-keys", directory + "/allow"])
        let endpoints = try await authority.endpoints()
        func send(_ keys: [String]) async throws -> ChildProcess {
            let send = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--timeout", "0.5", "--connect-timeout", "2", #"{"countUp":{}}"#] + keys, name: "send")
            await send.waitForExit(timeout: .seconds(30))
            return send
        }
        let allowed = try await send(["--curve-server-key", directory + "/server.pub", "--curve-secret-key", directory + "/client.key"])
        #expect(allowed.output.last?.contains(#""acked":1"#) == true, "\(allowed.diagnostics)")
        let stranger = try await send(["--curve-server-key", directory + "/server.pub", "--curve-secret-key", directory + "/stranger.key"])
        #expect(stranger.output.last?.contains(#""acked":0"#) == true)
        let plain = try await send([])
        #expect(plain.output.last?.contains(#""acked":0"#) == true)
        let snapshot = try ChildProcess.node(["observe", "--app", "counter", "--feed", endpoints.feed, "--actions", endpoints.actions, "--once", "--json",
                                              "--curve-server-key", directory + "/server.pub", "--curve-secret-key", directory + "/client.key"])
        #expect(await snapshot.waitForExit() == 0)
        #expect(snapshot.output.first == #"{"version":1,"state":{"count":1}}"#)
        #expect(authority.diagnostics.contains("not in the allowlist"))
        authority.signal(SIGTERM)
        #expect(await authority.waitForExit() == 0)
    }
}
