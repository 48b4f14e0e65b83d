import Foundation

/// CPU time (user + system) of a process, from `/proc`: what a figure costs in CPU, apart from
/// how long it took on a machine whose cores the roles share.
enum ProcessCPU {
    /// Seconds of CPU `pid` has used so far; `nil` once it is gone or when `/proc` cannot say.
    static func seconds(of pid: pid_t) -> Double? {
        // Fields 14 and 15 of /proc/PID/stat (utime, stime), after the command name in parentheses.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After ")": state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Seconds of CPU this process has used so far.
    static func ownSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Microseconds of CPU per item, from two readings; `nil` when either is missing.
    static func microsecondsPer(_ count: Int, from before: Double?, to after: Double?) -> Double? {
        guard let before, let after, count > 0 else { return nil }
        return (after - before) / Double(count) * 1e6
    }
}
