import SystemCalls
import Testing

@Suite struct MachineCPUTests {
    @Test func theCPULineSplitsIntoProcessInterruptStealAndIdleTime() throws {
        let text = "cpu  100 20 30 400 50 6 7 8 0 0\ncpu0 50 10 15 200 25 3 3 4 0 0\nintr 1 2 3\n"
        let cpu = try #require(MachineCPU.parse(text, ticksPerSecond: 100))
        #expect(cpu == MachineCPU(processSeconds: 1.5, interruptSeconds: 0.13, stealSeconds: 0.08, idleSeconds: 4.5))
    }

    @Test func aKernelWithoutStealReadsNoSteal() throws {
        let cpu = try #require(MachineCPU.parse("cpu  10 0 10 100 0 0 0\n", ticksPerSecond: 10))
        #expect(cpu == MachineCPU(processSeconds: 2, interruptSeconds: 0, stealSeconds: 0, idleSeconds: 10))
    }

    @Test func otherFirstLinesAreRefused() {
        #expect(MachineCPU.parse("", ticksPerSecond: 100) == nil)
        #expect(MachineCPU.parse("intr 1 2 3 4 5 6 7 8\n", ticksPerSecond: 100) == nil)
        #expect(MachineCPU.parse("cpu  1 2 3\n", ticksPerSecond: 100) == nil)
        #expect(MachineCPU.parse("cpu  1 2 x 4 5 6 7 8\n", ticksPerSecond: 100) == nil)
        #expect(MachineCPU.parse("cpu  1 2 3 4 5 6 7 8\n", ticksPerSecond: 0) == nil)
    }

    @Test func thisMachinesCountersOnlyGrow() throws {
        let first = try #require(MachineCPU.read())
        let second = try #require(MachineCPU.read())
        #expect(first.processSeconds > 0)
        #expect(second.processSeconds >= first.processSeconds)
        #expect(second.idleSeconds >= first.idleSeconds)
        #expect(second.interruptSeconds >= first.interruptSeconds)
        #expect(second.stealSeconds >= first.stealSeconds)
    }
}
