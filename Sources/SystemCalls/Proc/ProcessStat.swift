#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One process's line of `/proc/PID/stat`: who its parent is, when it started and the CPU it
/// has used, its own and that of the children it has waited for.
package struct ProcessStat: Sendable, Equatable {
    /// The process.
    package var pid: pid_t
    /// Its parent (0 for the kernel's own).
    package var parent: pid_t
    /// When it started, in clock ticks after boot: with the pid, which process this is (pids
    /// are reused).
    package var startTicks: UInt64
    /// Whether it is one of the kernel's own threads (`PF_KTHREAD`), which work for whoever
    /// needs them (writeback, softirqs).
    package var isKernelThread: Bool
    /// User and system time of all its threads, in clock ticks.
    package var ownTicks: UInt64
    /// User and system time of the children it has waited for (and what those had waited
    /// for), in clock ticks: the CPU of processes that have exited but belonged to it.
    package var reapedTicks: UInt64

    /// A line from its parts, CPU and start in clock ticks.
    package init(pid: pid_t, parent: pid_t, startTicks: UInt64 = 0, isKernelThread: Bool = false, ownTicks: UInt64, reapedTicks: UInt64) {
        self.pid = pid
        self.parent = parent
        self.startTicks = startTicks
        self.isKernelThread = isKernelThread
        self.ownTicks = ownTicks
        self.reapedTicks = reapedTicks
    }

    /// Its own and reaped CPU time, in clock ticks.
    package var totalTicks: UInt64 { ownTicks + reapedTicks }

    /// `PF_KTHREAD` of the kernel's `include/linux/sched.h`.
    private static let kernelThreadFlag: UInt64 = 0x0020_0000

    /// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
    package static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Its own CPU time in seconds.
    package var ownSeconds: Double { Double(ownTicks) / Self.ticksPerSecond }

    /// The line of `pid`, or `nil` once it is gone or when `/proc` cannot say.
    package static func read(_ pid: pid_t, root: String = "/proc") -> ProcessStat? {
        ProcFile.text("\(root)/\(pid)/stat").flatMap(parse)
    }

    /// Parses a `/proc/PID/stat` line. The command name (field 2) is in parentheses and may hold
    /// spaces and parentheses itself, so the fields are counted from its last `)`.
    package static func parse(_ line: String) -> ProcessStat? {
        guard let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")"),
              let pid = pid_t(line[..<open].trimmingSpaces) else { return nil }
        // After ")": state (field 3), ppid (4), ..., flags (9), ..., utime (14), stime (15),
        // cutime (16), cstime (17), ..., starttime (22).
        let fields = line[line.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let parent = pid_t(fields[1]), let flags = UInt64(fields[6]),
              let user = UInt64(fields[11]), let system = UInt64(fields[12]),
              let childrenUser = Int64(fields[13]), let childrenSystem = Int64(fields[14]),
              let start = UInt64(fields[19]) else { return nil }
        return ProcessStat(pid: pid, parent: parent, startTicks: start, isKernelThread: flags & Self.kernelThreadFlag != 0,
                           ownTicks: user + system, reapedTicks: UInt64(max(childrenUser, 0)) + UInt64(max(childrenSystem, 0)))
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
