import Foundation
import Testing

/// The command line itself: usage errors, help, graceful stop.
@Suite(.serialized) struct CLITests {
    @Test func wrongFlagsAndBadEndpointsAreOneLineUsageErrors() async throws {
        let cases: [([String], String)] = [
            (["authority", "--app", "counter", "--colour", "red"], "unknown option '--colour'"),
            (["authority", "--app", "counter", "--actions", "nonsense"], "--actions 'nonsense': not an endpoint"),
            (["authority", "--app", "counter", "--feed", "udp://x:1"], "unknown transport 'udp'"),
            (["authority", "--app", "nope", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"], "unknown app 'nope'"),
            (["fly"], "unknown command 'fly'"),
        ]
        for (arguments, message) in cases {
            let node = try NodeProcess(node: arguments)
            let status = await node.waitForExit(timeout: .seconds(10))
            #expect(status == 64, "\(arguments) exited \(String(describing: status))")
            let stderr = node.diagnostics
            #expect(stderr.contains(message), "\(arguments): \(stderr)")
            #expect(!stderr.contains("Fatal error"))
        }
    }

    @Test func helpIsPrintedAndExitsZero() async throws {
        let node = try NodeProcess(node: ["authority", "--help"])
        #expect(await node.waitForExit() == 0)
        #expect(node.output.first?.hasPrefix("reactor-node authority") == true)
        #expect(node.output.contains { $0.contains("env REACTOR_ACTIONS") })
    }

    @Test func anAuthorityStopsGracefullyOnSIGTERM() async throws {
        let node = try NodeProcess(node: ["authority", "--app", "counter", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"])
        _ = try await node.endpoints()
        node.signal(SIGTERM)
        #expect(await node.waitForExit(timeout: .seconds(10)) == 0, "\(node.diagnostics)")
        #expect(node.diagnostics.contains("stopping gracefully"))
    }

    @Test func environmentVariablesSetOptions() async throws {
        let node = try NodeProcess(node: ["authority"], environment: [
            "REACTOR_APP": "counter", "REACTOR_ACTIONS": "tcp://127.0.0.1:*", "REACTOR_WORKERS": "tcp://127.0.0.1:*", "REACTOR_FEED": "tcp://127.0.0.1:*",
        ])
        let endpoints = try await node.endpoints()
        #expect(endpoints.actions.hasPrefix("tcp://127.0.0.1:"))
        node.signal(SIGINT)
        #expect(await node.waitForExit(timeout: .seconds(10)) == 0)
    }
}
