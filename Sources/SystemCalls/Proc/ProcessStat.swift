#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One process's line of `/proc/PID/stat`: who its parent is and the CPU it has used, its own
/// and that of the children it has waited for.
package struct ProcessStat: Sendable, Equatable {
    /// The process.
    package var pid: pid_t
    /// Its parent (0 for the kernel's own).
    package var parent: pid_t
    /// User and system time of all its threads, in clock ticks.
    package var ownTicks: UInt64
    /// User and system time of the children it has waited for (and what those had waited
    /// for), in clock ticks: the CPU of processes that have exited but belonged to it.
    package var reapedTicks: UInt64

    /// A line from its parts, CPU in clock ticks.
    package init(pid: pid_t, parent: pid_t, ownTicks: UInt64, reapedTicks: UInt64) {
        self.pid = pid
        self.parent = parent
        self.ownTicks = ownTicks
        self.reapedTicks = reapedTicks
    }

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
        // After ")": state (field 3), ppid (4), ..., utime (14), stime (15), cutime (16), cstime (17).
        let fields = line[line.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let parent = pid_t(fields[1]),
              let user = UInt64(fields[11]), let system = UInt64(fields[12]),
              let childrenUser = Int64(fields[13]), let childrenSystem = Int64(fields[14]) else { return nil }
        return ProcessStat(pid: pid, parent: parent, ownTicks: user + system,
                           reapedTicks: UInt64(max(childrenUser, 0)) + UInt64(max(childrenSystem, 0)))
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
