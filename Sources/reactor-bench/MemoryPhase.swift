import Foundation
import MessagePack

/// Phase 6: the authority's memory over many actions (1,000,000 in the full run).
///
/// The authority's resident set (`VmRSS` in `/proc/PID/status`) is read when it has bound its
/// sockets, after every tenth of the actions (the client prints progress), and at the end, with
/// the peak (`VmHWM`). Everything the authority keeps is bounded (the client ledger, the feed
/// queue, open jobs), so once warm the resident set should stay flat.
enum MemoryPhase {
    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        let count = plan.memoryActions
        Output.error("bench: memory — the authority's resident set over \(count.grouped) countUp actions")
        let cluster = try await BenchCluster.authority(app: "counter", name: "authority-memory")
        let pid = cluster.authority.pid
        let (sent, samples, start, end, peak) = try await cluster.run { cluster in
            let start = ProcStatus.read(pid)?.rssKiB ?? 0
            let client = try cluster.client(workload: "countUp", count: count, window: plan.window,
                                            extra: ["--progress-every", String(max(count / 10, 1)), "--verify-field", "count"])
            var samples: [BenchResults.Memory.Sample] = []
            var seenLines = 0
            let deadline = ContinuousClock.now + BenchPlan.limit(count, minimumRate: 5_000)
            while client.isRunning && ContinuousClock.now < deadline {
                let lines = client.output
                for line in lines[seenLines...] {
                    guard let event = MessagePackValue.parse(line), event["event"]?.stringValue == "progress", let acked = event["acked"]?.intValue else { continue }
                    samples.append(.init(acked: Int(acked), rssKiB: ProcStatus.read(pid)?.rssKiB ?? 0))
                }
                seenLines = lines.count
                try await Task.sleep(for: .milliseconds(5))
            }
            let result = try await cluster.result(of: client, timeout: .seconds(5))
            let status = ProcStatus.read(pid)
            return (result, samples, start, status?.rssKiB ?? 0, status?.peakKiB ?? 0)
        }
        let memory = BenchResults.Memory(actions: count, samples: samples, startRSSKiB: start, endRSSKiB: end, peakKiB: peak,
                                         ackedPerSecond: sent["per_second"]?.doubleValue ?? 0)
        results.memory = memory
        results.check("memory_count", "memory: every action acked and counted", sent["acked"]?.intValue == Int64(count) && sent["final_field"]?.intValue == Int64(count))
        Output.error("bench:   RSS \(start / 1_024) MiB at start, \(memory.warmRSSKiB / 1_024) MiB warm, \(end / 1_024) MiB at the end (peak \(peak / 1_024) MiB): \(memory.isFlat ? "flat" : "growing")")
    }
}

/// The memory figures of a process, from `/proc/PID/status`.
struct ProcStatus {
    /// Resident set now (`VmRSS`), KiB.
    var rssKiB: Int
    /// Peak resident set (`VmHWM`), KiB.
    var peakKiB: Int

    static func read(_ pid: pid_t) -> ProcStatus? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var status = ProcStatus(rssKiB: 0, peakKiB: 0)
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let value = Int(parts[1]) else { continue }
            if parts[0] == "VmRSS:" { status.rssKiB = value }
            if parts[0] == "VmHWM:" { status.peakKiB = value }
        }
        return status
    }
}
