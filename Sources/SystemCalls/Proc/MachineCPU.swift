/// What all of the machine's processors did since it booted, from the `cpu` line of
/// `/proc/stat`, in seconds summed over the processors.
///
/// Two readings tell how busy the machine was in between, and with what: processes, the
/// kernel's interrupt work (which no process is charged for, much of a loopback network's
/// cost), or a hypervisor that ran other guests on this one's processors (steal).
package struct MachineCPU: Sendable, Equatable {
    /// User, nice and system time: work done for processes.
    package var processSeconds: Double
    /// Hard and soft interrupt time.
    package var interruptSeconds: Double
    /// Time this virtual machine's processors waited while the host ran something else.
    package var stealSeconds: Double
    /// Idle and I/O-wait time.
    package var idleSeconds: Double

    /// A reading from its parts, in seconds.
    package init(processSeconds: Double, interruptSeconds: Double, stealSeconds: Double, idleSeconds: Double) {
        self.processSeconds = processSeconds
        self.interruptSeconds = interruptSeconds
        self.stealSeconds = stealSeconds
        self.idleSeconds = idleSeconds
    }

    /// The machine's reading now, or `nil` when `/proc/stat` cannot be read.
    package static func read(from path: String = "/proc/stat") -> MachineCPU? {
        ProcFile.text(path).flatMap { parse($0, ticksPerSecond: ProcessStat.ticksPerSecond) }
    }

    /// Parses the first line of `/proc/stat`: `cpu  user nice system idle iowait irq softirq
    /// steal ...` in clock ticks (older kernels stop before steal, which then reads as 0).
    package static func parse(_ text: String, ticksPerSecond: Double) -> MachineCPU? {
        guard let line = text.split(separator: "\n").first else { return nil }
        let fields = line.split(separator: " ")
        guard fields.first == "cpu", fields.count >= 8 else { return nil }
        let values = fields.dropFirst().prefix(8)
        let ticks = values.compactMap { UInt64($0) }
        guard ticks.count == values.count, ticks.count >= 7, ticksPerSecond > 0 else { return nil }
        func seconds(_ values: UInt64...) -> Double { Double(values.reduce(0, +)) / ticksPerSecond }
        return MachineCPU(processSeconds: seconds(ticks[0], ticks[1], ticks[2]), interruptSeconds: seconds(ticks[5], ticks[6]),
                          stealSeconds: ticks.count > 7 ? seconds(ticks[7]) : 0, idleSeconds: seconds(ticks[3], ticks[4]))
    }
}
