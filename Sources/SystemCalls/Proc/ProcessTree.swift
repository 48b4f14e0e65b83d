#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process and every process under it, as `/proc` lists them at one moment.
///
/// Its CPU time counts each live process's own time and what it has reaped, so a child that
/// exited and was waited for still counts (through its parent's `cutime`), once. A process
/// whose parent exits before it is adopted by another one and leaves the tree. Readings race
/// with processes that exit: one reaped while `/proc` is read can be missed or counted twice,
/// which costs at most its own time.
package struct ProcessTree: Sendable {
    /// The processes of the tree, the root first.
    package var members: [ProcessStat]

    /// The tree under `root` (the process itself when it has no children); empty when `root`
    /// is gone.
    package static func read(root: pid_t, procfs: String = "/proc") -> ProcessTree {
        ProcessTable.read(procfs: procfs).tree(root: root)
    }

    /// The tree under `root` among `processes` (one reading of `/proc`).
    package init(root: pid_t, among processes: [ProcessStat]) {
        var children: [pid_t: [ProcessStat]] = [:]
        var rootStat: ProcessStat?
        for process in processes {
            if process.pid == root { rootStat = process } else { children[process.parent, default: []].append(process) }
        }
        guard let rootStat else {
            members = []
            return
        }
        var members = [rootStat]
        var next = 0
        while next < members.count {
            members += children[members[next].pid] ?? []
            next += 1
        }
        self.members = members
    }

    /// The CPU time of the tree in seconds: every member's own time and what it has reaped.
    package var seconds: Double {
        Double(members.reduce(0) { $0 + $1.totalTicks }) / ProcessStat.ticksPerSecond
    }
}
