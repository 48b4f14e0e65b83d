import Foundation
import Testing
import TestSupport
import TestTraits

/// `reactor-node run`: a whole deployment in one process, driven by other processes.
@Suite(.spawnsProcesses) struct RunCommandTests {
    @Test func runServesActionsFromAnotherProcessPrintsStateLinesAndStopsOnSIGTERM() async throws {
        let run = try ChildProcess.node(["run", "--app", "counter", "--workers", "2", "--json"], name: "run")
        let endpoints = try await run.endpoints()
        #expect(endpoints.actions.hasPrefix("tcp://127.0.0.1:"), "\(endpoints)")
        // The state line of the empty counter comes first, from the observer in the process.
        #expect(await run.waitForLine { $0 == #"{"version":0,"state":{"count":0}}"# } != nil, "\(run.output)\(run.diagnostics)")
        // The two in-process workers registered with the in-process authority.
        let workers = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(15)) { $0["workers"] ?? 0 >= 2 }["workers"]
        #expect(workers == 2)

        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "3", #"{"countUp":{}}"#, #"{"countUpAsync":{}}"#], name: "send")
        #expect(await send.waitForExit(timeout: .seconds(60)) == 0, "\(send.diagnostics)")
        #expect(send.output.last?.contains(#""acked":6,"failed":0"#) == true, "\(send.output)")
        // 3 sync increases and 3 run by the workers: 6 mutations, each a new version.
        let final = await run.waitForLine(timeout: .seconds(30)) { $0.contains(#""count":6"#) }
        #expect(final == #"{"version":6,"state":{"count":6}}"#, "\(run.output)\(run.diagnostics)")

        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(15)) == 0, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("stopping gracefully"))
        #expect(run.diagnostics.contains("stopped at version 6 after 6 action(s)"), "\(run.diagnostics)")
    }

    @Test func runKeepsStateInItsDataDirectoryAcrossRestarts() async throws {
        let directory = NSTemporaryDirectory() + "reactorbus-run-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for round in 1...2 {
            let run = try ChildProcess.node(["run", "--app", "counter", "--data", directory, "--workers", "1", "--json"], name: "run-\(round)")
            let endpoints = try await run.endpoints()
            #expect(await run.waitForLine { $0 == #"{"version":\#(round - 1),"state":{"count":\#(round - 1)}}"# } != nil, "\(run.output)\(run.diagnostics)")
            let send = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, #"{"countUp":{}}"#], name: "send-\(round)")
            #expect(await send.waitForExit(timeout: .seconds(60)) == 0, "\(send.diagnostics)")
            #expect(await run.waitForLine { $0 == #"{"version":\#(round),"state":{"count":\#(round)}}"# } != nil, "\(run.output)\(run.diagnostics)")
            run.signal(SIGINT)
            #expect(await run.waitForExit(timeout: .seconds(15)) == 0, "\(run.diagnostics)")
        }
    }

    @Test func runRefusesBadInputWithUsageErrors() async throws {
        let cases: [([String], String)] = [
            (["run", "--app", "nope"], "unknown app 'nope'; known apps: counter, primes, inventory, catalog"),
            (["run"], "run: missing '--app NAME' (or REACTOR_APP); registered apps: counter, primes, inventory, catalog"),
            (["run", "--app", "counter", "--workers", "-1"], "--workers"),
            (["run", "--app", "counter", "--effect-delay", "soon"], "'--effect-delay soon' must be a positive number of seconds"),
            (["run", "--app", "counter", "--repair", "truncate"], "run: --repair needs --data"),
        ]
        for (arguments, message) in cases {
            let node = try ChildProcess.node(arguments)
            #expect(await node.waitForExit(timeout: .seconds(10)) == 64, "\(arguments)")
            #expect(node.diagnostics.contains(message), "\(arguments): \(node.diagnostics)")
            #expect(node.output.isEmpty, "\(arguments) printed \(node.output)")
        }
    }
}
