import Foundation
import SystemCalls

/// CPU time (user + system) of a process, from `/proc`: what a figure costs in CPU, apart from
/// how long it took on a machine whose cores the roles share.
enum ProcessCPU {
    /// Seconds of CPU `pid` has used so far; `nil` once it is gone or when `/proc` cannot say.
    static func seconds(of pid: pid_t) -> Double? {
        ProcessStat.read(pid)?.ownSeconds
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
