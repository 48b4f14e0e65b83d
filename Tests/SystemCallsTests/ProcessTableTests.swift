import Glibc
import SystemCalls
import TestSupport
import Testing

@Suite struct ProcessTableTests {
    @Test func cpuSinceAnEarlierTableCountsWhatEachProcessAddedApartFromTheExcludedAndTheKernels() {
        let earlier = ProcessTable([
            ProcessStat(pid: 10, parent: 1, startTicks: 5, ownTicks: 60, reapedTicks: 40),
            ProcessStat(pid: 11, parent: 1, startTicks: 7, ownTicks: 50, reapedTicks: 0),
            ProcessStat(pid: 12, parent: 2, startTicks: 1, isKernelThread: true, ownTicks: 10, reapedTicks: 0),
            ProcessStat(pid: 13, parent: 1, startTicks: 3, ownTicks: 20, reapedTicks: 0),
            ProcessStat(pid: 14, parent: 1, startTicks: 3, ownTicks: 9, reapedTicks: 0),
        ])
        let now = ProcessTable([
            // 30 more: 20 of its own, 10 reaped.
            ProcessStat(pid: 10, parent: 1, startTicks: 5, ownTicks: 80, reapedTicks: 50),
            // The pid taken by a process started since: all of its 4.
            ProcessStat(pid: 11, parent: 1, startTicks: 99, ownTicks: 4, reapedTicks: 0),
            // A kernel thread: none of it.
            ProcessStat(pid: 12, parent: 2, startTicks: 1, isKernelThread: true, ownTicks: 500, reapedTicks: 0),
            // Excluded: none of it.
            ProcessStat(pid: 13, parent: 1, startTicks: 3, ownTicks: 80, reapedTicks: 0),
            // New: all of its 6.
            ProcessStat(pid: 20, parent: 10, startTicks: 101, ownTicks: 6, reapedTicks: 0),
        ])
        #expect(now.seconds(since: earlier, excluding: [13]) == 40 / ProcessStat.ticksPerSecond)
        #expect(now.seconds(since: earlier, excluding: [13, 10, 20]) == 4 / ProcessStat.ticksPerSecond)
        #expect(now.seconds(since: now, excluding: []) == 0)
        #expect(now.tree(root: 10).members.map(\.pid) == [10, 20])
    }

    @Test func aSpinningProcessOutsideTheExcludedIsCounted() async throws {
        // A counting loop (about 0.2 s of CPU) under `timeout` (so it ends even if this test
        // dies), started after the first table; it says when it is done and becomes `sleep`.
        let before = ProcessTable.read()
        let spinner = try ChildProcess(executable: "timeout", arguments: ["60", "sh", "-c", "\(CountingLoop.script); echo spun; exec sleep 60"],
                                       name: "spinner")
        let done = await spinner.waitForLine(timeout: .seconds(30)) { $0 == "spun" }
        #expect(done != nil, "\(spinner.diagnostics)")
        let spun = ProcessTable.read().tree(root: spinner.pid).seconds
        let after = ProcessTable.read()
        await spinner.stop()
        #expect(spun >= 0.05)
        let loop = Set(after.tree(root: spinner.pid).members.map(\.pid))
        #expect(loop.count == 2, "timeout and its loop")
        // The loop's CPU is in what processes used since, and leaves with it when excluded.
        let all = after.seconds(since: before, excluding: [])
        let withoutLoop = after.seconds(since: before, excluding: loop)
        func ticks(_ seconds: Double) -> Double { (seconds * ProcessStat.ticksPerSecond).rounded() }
        #expect(ticks(all - withoutLoop) >= ticks(spun))
    }
}
