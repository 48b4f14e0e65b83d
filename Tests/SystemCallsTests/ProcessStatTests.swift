import Glibc
import SystemCalls
import Testing

@Suite struct ProcessStatTests {
    @Test func aLineIsReadFromAfterTheCommandsLastParenthesis() throws {
        // A command name may hold spaces and parentheses: fields are counted from its last ")".
        let line = "4321 (odd) name (x) R 17 4321 4321 0 -1 4194560 120 0 0 0 250 75 30 12 20 0 4 0 9000 1000 200\n"
        let stat = try #require(ProcessStat.parse(line))
        #expect(stat == ProcessStat(pid: 4321, parent: 17, ownTicks: 325, reapedTicks: 42))
    }

    @Test func malformedLinesAreRefused() {
        #expect(ProcessStat.parse("") == nil)
        #expect(ProcessStat.parse("12 (cut short) S 1 12 12 0 -1 4194560 1 0 0 0 5 5") == nil)
        #expect(ProcessStat.parse("12 no parentheses S 1 12 12 0 -1 4194560 1 0 0 0 5 5 0 0 20 0") == nil)
        #expect(ProcessStat.parse("x (sh) S 1 12 12 0 -1 4194560 1 0 0 0 5 5 0 0 20 0") == nil)
        #expect(ProcessStat.parse("12 (sh) S 1 12 12 0 -1 4194560 1 0 0 0 five 5 0 0 20 0") == nil)
    }

    @Test func thisProcessReadsAsItselfUnderItsParent() throws {
        let stat = try #require(ProcessStat.read(getpid()))
        #expect(stat.pid == getpid())
        #expect(stat.parent == getppid())
    }

    @Test func aProcessThatDoesNotExistReadsAsNothing() {
        // Above the kernel's largest pid_max (2^22).
        #expect(ProcessStat.read(pid_t(1 << 23)) == nil)
    }
}
