import Glibc
import SystemCalls
import Testing

@Suite struct ProcessStatTests {
    @Test func aLineIsReadFromAfterTheCommandsLastParenthesis() throws {
        // A command name may hold spaces and parentheses: fields are counted from its last ")".
        let line = "4321 (odd) name (x) R 17 4321 4321 0 -1 4194560 120 0 0 0 250 75 30 12 20 0 4 0 9000 1000 200\n"
        let stat = try #require(ProcessStat.parse(line))
        #expect(stat == ProcessStat(pid: 4321, parent: 17, startTicks: 9_000, isKernelThread: false, ownTicks: 325, reapedTicks: 42))
        #expect(stat.totalTicks == 367)
    }

    @Test func theKernelsThreadsAreToldByTheirFlag() throws {
        // flags 0x208040: PF_KTHREAD (0x200000) among others.
        let line = "57 (kworker/1:1H-kblockd) I 2 0 0 0 -1 2129984 0 0 0 0 0 12 0 0 0 -20 1 0 74 0 0"
        let stat = try #require(ProcessStat.parse(line))
        #expect(stat.isKernelThread)
        #expect(stat.parent == 2)
        #expect(stat.startTicks == 74)
        #expect(stat.ownTicks == 12)
    }

    @Test func malformedLinesAreRefused() {
        #expect(ProcessStat.parse("") == nil)
        #expect(ProcessStat.parse("12 (cut short) S 1 12 12 0 -1 4194560 1 0 0 0 5 5 0 0 20 0 1 0") == nil)
        #expect(ProcessStat.parse("12 no parentheses S 1 12 12 0 -1 4194560 1 0 0 0 5 5 0 0 20 0 1 0 9") == nil)
        #expect(ProcessStat.parse("x (sh) S 1 12 12 0 -1 4194560 1 0 0 0 5 5 0 0 20 0 1 0 9") == nil)
        #expect(ProcessStat.parse("12 (sh) S 1 12 12 0 -1 4194560 1 0 0 0 five 5 0 0 20 0 1 0 9") == nil)
        #expect(ProcessStat.parse("12 (sh) S 1 12 12 0 -1 4194560 1 0 0 0 5 5 0 0 20 0 1 0 later") == nil)
    }

    @Test func thisProcessReadsAsItselfUnderItsParent() throws {
        let stat = try #require(ProcessStat.read(getpid()))
        #expect(stat.pid == getpid())
        #expect(stat.parent == getppid())
        #expect(stat.startTicks > 0)
        #expect(!stat.isKernelThread)
    }

    @Test func aProcessThatDoesNotExistReadsAsNothing() {
        // Above the kernel's largest pid_max (2^22).
        #expect(ProcessStat.read(pid_t(1 << 23)) == nil)
    }
}
