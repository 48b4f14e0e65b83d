import Testing
import TestSupport
import TestTraits

/// `reactor-node demo`, the main job, run as a user runs it (with fewer counter actions).
@Suite(.spawnsProcesses) struct DemoCommandTests {
    @Test func theDemoPassesEveryCheckOfItsThreeParts() async throws {
        let demo = try ChildProcess.node(["demo", "--actions", "400"], name: "demo")
        #expect(await demo.waitForExit(timeout: .seconds(120)) == 0, "\(demo.diagnostics)")
        let lines = demo.output
        #expect(lines.last == "demo: 10 passed, 0 failed", "\(lines)")
        #expect(lines.filter { $0.hasPrefix("PASS  ") }.count == 10)
        #expect(lines.contains { $0.hasPrefix("PASS  desk: every tick of both feeds applied exactly once") })
        #expect(lines.contains { $0.hasPrefix("desk: board ACME 10/10, XYZ 40/40") })
    }
}
