import Foundation
import MessagePack
import SystemCalls

/// What the machine did while one phase ran, besides the bench: the figures of a phase are only
/// as good as the cores it had, and this machine is shared.
///
/// Averaged over the phase, in cores: the bench and every process it started (``ProcessTree``
/// under the bench), processes outside it (not the kernel's threads, which work for everyone),
/// the kernel's interrupt work (loopback networking is mostly that, charged to no process) and
/// steal (a hypervisor running other guests on these cores). A phase during which processes
/// outside the bench used ``busyThreshold`` of a core or more is flagged: its rates are lower and
/// its latencies higher than this machine's, for a reason outside the code measured.
struct HostActivity: Sendable {
    /// A moment's reading of the machine and of every process.
    struct Reading: Sendable {
        var instant: ContinuousClock.Instant
        var machine: MachineCPU
        var processes: ProcessTable
        /// The bench and every process under it.
        var bench: ProcessTree

        /// Now; `nil` where `/proc/stat` cannot be read (then no phase is reported).
        static func now() -> Reading? {
            let processes = ProcessTable.read()
            guard let machine = MachineCPU.read() else { return nil }
            return Reading(instant: .now, machine: machine, processes: processes, bench: processes.tree(root: getpid()))
        }
    }

    /// Other processes' share of a core from which a phase is flagged.
    static let busyThreshold = 0.1

    var phase: String
    var seconds: Double
    var benchCores: Double
    var othersCores: Double
    var interruptCores: Double
    var stealCores: Double
    /// The one-minute load average when the phase ended.
    var loadAverage: Double?

    /// The activity between two readings; `nil` when no time passed.
    init?(phase: String, from start: Reading, to end: Reading, loadAverage: Double? = HostActivity.loadAverage()) {
        let elapsed = start.instant.duration(to: end.instant)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard seconds > 0 else { return nil }
        self.phase = phase
        self.seconds = seconds
        benchCores = max(end.bench.seconds - start.bench.seconds, 0) / seconds
        // Per process, from the same counters as the bench's. The machine's process time less
        // the bench's would not do: the two are counted differently (a process's time from the
        // scheduler's clock, the machine's from samples at each tick) and the difference read
        // below zero in every phase of quiet runs, where a small load of others would hide.
        othersCores = end.processes.seconds(since: start.processes, excluding: Set(end.bench.members.map(\.pid))) / seconds
        interruptCores = max(end.machine.interruptSeconds - start.machine.interruptSeconds, 0) / seconds
        stealCores = max(end.machine.stealSeconds - start.machine.stealSeconds, 0) / seconds
        self.loadAverage = loadAverage
    }

    /// Whether processes outside the bench took enough of the machine to lower this phase's figures.
    var othersWereBusy: Bool { othersCores >= Self.busyThreshold }

    /// `bench 1.82, others 0.01, interrupts 0.10, steal 0.00 cores; load 1.9`.
    var summary: String {
        func cores(_ value: Double) -> String { String(format: "%.2f", value) }
        return "bench \(cores(benchCores)), others \(cores(othersCores)), interrupts \(cores(interruptCores)), steal \(cores(stealCores)) cores"
            + (loadAverage.map { "; load \(String(format: "%.1f", $0))" } ?? "")
    }

    /// The warning a flagged phase gets, on stderr and under the report's table.
    var warning: String {
        "processes outside the bench used \(String(format: "%.2f", othersCores)) of the \(ProcessInfo.processInfo.activeProcessorCount) cores during \(phase): "
            + "its figures are lower than this machine's; stop them and run again"
    }

    var json: MessagePackValue {
        .object([("phase", .string(phase)), ("seconds", .number(seconds, places: 2)), ("bench_cores", .number(benchCores, places: 3)),
                 ("others_cores", .number(othersCores, places: 3)), ("interrupt_cores", .number(interruptCores, places: 3)),
                 ("steal_cores", .number(stealCores, places: 3)), ("load_average", loadAverage.map { .number($0, places: 2) } ?? .nil),
                 ("others_busy", .bool(othersWereBusy))])
    }

    /// The one-minute load average, from `getloadavg(3)`.
    static func loadAverage() -> Double? {
        var averages = [Double](repeating: 0, count: 1)
        return getloadavg(&averages, 1) == 1 ? averages[0] : nil
    }
}
