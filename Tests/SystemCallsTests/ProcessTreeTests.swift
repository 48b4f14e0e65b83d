import Glibc
import SystemCalls
import TestSupport
import Testing

@Suite struct ProcessTreeTests {
    @Test func theTreeIsTheRootAndEveryProcessUnderItAndNothingElse() {
        let processes = [
            ProcessStat(pid: 1, parent: 0, ownTicks: 1_000, reapedTicks: 1_000),
            ProcessStat(pid: 12, parent: 11, ownTicks: 30, reapedTicks: 0),
            ProcessStat(pid: 10, parent: 1, ownTicks: 100, reapedTicks: 5),
            ProcessStat(pid: 11, parent: 10, ownTicks: 20, reapedTicks: 7),
            ProcessStat(pid: 20, parent: 1, ownTicks: 400, reapedTicks: 0),
            ProcessStat(pid: 13, parent: 10, ownTicks: 1, reapedTicks: 0),
        ]
        let tree = ProcessTree(root: 10, among: processes)
        #expect(tree.members.map(\.pid) == [10, 11, 13, 12])
        #expect(tree.seconds == Double(100 + 5 + 20 + 7 + 1 + 30) / ProcessStat.ticksPerSecond)
        #expect(ProcessTree(root: 12, among: processes).members.map(\.pid) == [12])
        #expect(ProcessTree(root: 99, among: processes).members.isEmpty)
        #expect(ProcessTree(root: 99, among: processes).seconds == 0)
    }

    private func shell(_ script: String, name: String) throws -> ChildProcess {
        try ChildProcess(executable: "/bin/sh", arguments: ["-c", script], name: name)
    }

    @Test func childrenThatExitedAndWereWaitedForStillCount() async throws {
        // The shell runs a counting loop in a subshell (about 0.2 s of CPU), waits for it, says
        // so and becomes `sleep` (same process, same counters): its own time is a fork and a
        // wait, the loop's is what it reaped.
        let shell = try shell("(\(CountingLoop.script)); echo reaped; exec sleep 60", name: "reaping-shell")
        let reaped = await shell.waitForLine(timeout: .seconds(30)) { $0 == "reaped" }
        #expect(reaped != nil, "\(shell.diagnostics)")
        let tree = ProcessTree.read(root: shell.pid)
        await shell.stop()
        let root = try #require(tree.members.first)
        #expect(tree.members.map(\.pid) == [shell.pid])
        #expect(root.ownSeconds < 0.05)
        #expect(tree.seconds >= 0.05, "the loop's CPU, reaped by the shell, counts")
    }

    @Test func liveDescendantsCountAndSiblingsDoNot() async throws {
        // The shell starts a counting loop (about 0.2 s of CPU) under `timeout` (so it ends even
        // if this test dies) and says timeout's pid; the loop says when it is done and becomes
        // `sleep`, keeping its counters. Then the shell becomes `sleep` too.
        let shell = try shell("timeout 60 sh -c '\(CountingLoop.script); echo spun; exec sleep 60' & echo $!; exec sleep 60",
                              name: "spinning-shell")
        let line = await shell.waitForLine(timeout: .seconds(30)) { pid_t($0) != nil }
        let spinner = try #require(line.flatMap { pid_t($0) }, "\(shell.diagnostics)")
        var spinning = true
        defer { if spinning { kill(spinner, SIGTERM) } }
        let done = await shell.waitForLine(timeout: .seconds(30)) { $0 == "spun" }
        #expect(done != nil, "\(shell.diagnostics)")
        // The loop is timeout's child.
        let spun = ProcessTree.read(root: spinner).members.dropFirst().reduce(0) { $0 + $1.ownSeconds }
        #expect(spun >= 0.05)
        let tree = ProcessTree.read(root: shell.pid)
        let underTimeout = ProcessTree.read(root: spinner)
        kill(spinner, SIGTERM)
        spinning = false
        await shell.stop()
        #expect(tree.members.count == 3, "the shell, timeout and its loop: \(tree.members.map(\.pid))")
        #expect(tree.members.map(\.pid).contains(spinner))
        #expect(tree.seconds >= spun)
        // Under timeout: itself and the loop, not the shell above it.
        #expect(underTimeout.members.count == 2)
        #expect(!underTimeout.members.map(\.pid).contains(shell.pid))
    }
}
