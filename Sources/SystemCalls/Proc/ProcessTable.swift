#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every process `/proc` listed at one moment: two readings tell how much CPU processes used in
/// between, counted per process from the same counters as ``ProcessTree``'s.
package struct ProcessTable: Sendable {
    /// The processes, in `/proc`'s order.
    package var processes: [ProcessStat]

    /// A table of `processes`.
    package init(_ processes: [ProcessStat]) {
        self.processes = processes
    }

    /// The processes `/proc` lists now.
    package static func read(procfs: String = "/proc") -> ProcessTable {
        ProcessTable(ProcFile.processIDs(root: procfs).compactMap { ProcessStat.read($0, root: procfs) })
    }

    /// The tree under `root` in this table.
    package func tree(root: pid_t) -> ProcessTree {
        ProcessTree(root: root, among: processes)
    }

    /// Seconds of CPU the processes of this table used since `earlier`, apart from those in
    /// `excluded` and the kernel's threads: for each, its own and reaped time now less what it
    /// had then (all of it for a process started since; a pid reused since counts as new).
    /// A process that started and ended in between counts through whoever reaped it; one whose
    /// reaper ended too is not seen.
    package func seconds(since earlier: ProcessTable, excluding excluded: Set<pid_t>) -> Double {
        var before: [pid_t: ProcessStat] = [:]
        for process in earlier.processes { before[process.pid] = process }
        var ticks: UInt64 = 0
        for process in processes where !process.isKernelThread && !excluded.contains(process.pid) {
            if let then = before[process.pid], then.startTicks == process.startTicks {
                ticks += process.totalTicks - min(then.totalTicks, process.totalTicks)
            } else {
                ticks += process.totalTicks
            }
        }
        return Double(ticks) / ProcessStat.ticksPerSecond
    }
}
