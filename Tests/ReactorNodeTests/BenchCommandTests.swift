import Foundation
import Testing
import TestSupport
import TestTraits

/// `reactor-bench` end to end, with tiny counts: every phase runs its real processes, the
/// JSON has every figure, the correctness checks hold, and no child outlives the bench.
@Suite(.spawnsProcesses, .serialized) struct BenchCommandTests {
    static let tiny = ["--quick", "--json", "--actions", "2000", "--messages", "20000", "--samples", "200", "--state-sizes", "1024,262144"]

    /// Processes of this build that only the bench starts: its peers (`reactor-bench peer`), its
    /// authorities (which it starts with an unusually high --max-in-flight) and the Python
    /// baseline authority.
    private func benchChildren() -> [String] {
        func resolved(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }
        let bench = resolved(ChildProcess.reactorBench)
        let node = resolved(ChildProcess.reactorNode)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> String? in
            guard Int32(entry) != nil, let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            let program = arguments.first.map(resolved)
            let peer = program == bench && arguments.dropFirst().first == "peer"
            let authority = program == node && arguments.contains("10000000")
            let python = arguments.contains { $0.hasSuffix("baseline_authority.py") }
            return peer || authority || python ? "\(entry): \(arguments.joined(separator: " "))" : nil
        }
    }

    private func startBench(_ arguments: [String], name: String) throws -> ChildProcess {
        try ChildProcess.program(executable: ChildProcess.reactorBench, arguments: arguments, name: name)
    }

    private func number(_ object: [String: Any], _ path: String...) -> Double? {
        var current: Any? = object
        for key in path { current = (current as? [String: Any])?[key] }
        return (current as? NSNumber)?.doubleValue
    }

    @Test func aQuickRunReportsEveryFigureAndPassesItsChecks() async throws {
        let page = NSTemporaryDirectory() + "reactorbus-bench-\(UUID().uuidString).html"
        defer { try? FileManager.default.removeItem(atPath: page) }
        let bench = try startBench(Self.tiny + ["--html", page], name: "bench")
        let status = await bench.waitForExit(timeout: .seconds(150))
        #expect(status == 0, "\(bench.diagnostics)")
        let line = try #require(bench.output.last(where: { $0.hasPrefix("{") }), "no JSON on stdout\(bench.diagnostics)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])

        for key in ["plan", "sizes", "baseline", "pipeline", "pipeline_async", "sync", "async", "clients", "clients_pipeline", "latency", "snapshot", "state", "memory", "durability", "pause", "failover", "python", "host", "ratios", "checks", "failures", "passed"] {
            #expect(report[key] != nil, "missing \(key)")
        }
        #expect(report["passed"] as? Bool == true, "\(line)")
        #expect((report["failures"] as? [Any])?.isEmpty == true, "\(line)")
        let checks = try #require(report["checks"] as? [String: Bool])
        for key in ["pipeline_count", "pipeline_async_count", "sync_count", "async_count", "latency_complete", "snapshot_count", "state_1024_exact", "state_262144_exact", "state_late_joiner_exact", "memory_count",
                    "durability_always_count", "durability_batch_count", "durability_none_count", "pause_without_acked", "pause_with_acked",
                    "state_pauses_checkpoints", "state_pauses_replica",
                    "clients_1_count", "clients_10_count", "clients_100_count", "clients_pipeline_1_count", "clients_pipeline_100_count"] {
            #expect(checks[key] == true, "check \(key): \(checks[key].map(String.init) ?? "missing")")
        }
        #expect(checks.values.allSatisfy { $0 })

        let positive: [[String]] = [
            ["sizes", "action_bytes"], ["sizes", "ack_bytes"],
            ["baseline", "pubsub_per_second"], ["baseline", "echo_per_second"], ["baseline", "rtt", "p50_us"], ["baseline", "rtt", "p99_us"],
            ["pipeline", "acked_per_second"], ["pipeline", "applied_per_second"],
            ["pipeline_async", "acked_per_second"], ["pipeline_async", "applied_per_second"],
            ["sync", "acked_per_second"], ["sync", "applied_per_second"], ["sync", "observer_count"],
            ["async", "acked_per_second"], ["async", "applied_per_second"], ["async", "observer_count"],
            ["latency", "ack", "p50_us"], ["latency", "ack", "p99_us"], ["latency", "ack_with_observer", "p50_us"],
            ["latency", "raw_paired", "p50_us"], ["latency", "raw_paired_with_observer", "p99_us"],
            ["latency", "observed", "p50_us"], ["latency", "observed", "p99_us"],
            ["snapshot", "acked_per_second"], ["snapshot", "state_bytes"], ["snapshot", "snapshots_published"],
            ["snapshot", "snapshots_per_1000_actions"], ["snapshot", "feed_bytes_per_second"],
            ["memory", "start_rss_kib"], ["memory", "end_rss_kib"], ["memory", "peak_rss_kib"],
            ["durability", "always", "acked_per_second"], ["durability", "batch", "acked_per_second"], ["durability", "none", "acked_per_second"],
            ["pause", "without_snapshots", "ping_rtt", "max_us"], ["pause", "with_snapshots", "ping_rtt", "max_us"], ["pause", "with_snapshots", "snapshots_written"],
        ]
        for path in positive {
            let value = path.dropFirst().reduce(report[path[0]]) { ($0 as? [String: Any])?[$1] }
            #expect(((value as? NSNumber)?.doubleValue ?? 0) > 0, "\(path.joined(separator: ".")) is \(String(describing: value))")
        }
        #expect(number(report, "sync", "observer_count") == number(report, "sync", "actions"))
        #expect(number(report, "async", "observer_count") == number(report, "async", "actions"))
        #expect(number(report, "pipeline_async", "observer_count") == number(report, "async", "actions"))
        // CPU is read in clock ticks (10 ms): a tiny run may read 0, but both roles are measured.
        #expect(number(report, "pipeline_async", "authority_cpu_us_per_action") != nil)
        #expect(number(report, "pipeline_async", "workers_cpu_us_per_action") != nil)
        // The libzmq + msgpack-c authority is measured with the fewest and the most clients.
        let clientRuns = try #require(report["clients_pipeline"] as? [[String: Any]])
        #expect(clientRuns.map { ($0["clients"] as? NSNumber)?.intValue } == [1, 100])
        #expect(clientRuns.allSatisfy { (($0["acked_per_second"] as? NSNumber)?.doubleValue ?? 0) > 0 })
        #expect(((report["clients"] as? [[String: Any]])?.map { ($0["clients"] as? NSNumber)?.intValue }) == [1, 10, 100])
        #expect(((report["memory"] as? [String: Any])?["samples"] as? [Any])?.isEmpty == false)
        let states = try #require((report["state"] as? [String: Any])?["sizes"] as? [[String: Any]])
        #expect(states.map { ($0["target_bytes"] as? NSNumber)?.intValue } == [1_024, 262_144])
        #expect(states.allSatisfy { ($0["acked"] as? NSNumber)?.intValue == 1_000 && (($0["acked_per_second"] as? NSNumber)?.doubleValue ?? 0) > 0 })
        #expect((states.last?["state_bytes"] as? NSNumber)?.intValue ?? 0 > 200_000)
        #expect((states.last?["late_join_seconds"] as? NSNumber)?.doubleValue ?? 0 > 0)
        #expect(number(report, "state", "raw_copy_seconds") ?? 0 > 0)
        #expect(number(report, "state", "floor_build_seconds") ?? 0 > 0)
        #expect(number(report, "state", "codable_encode_seconds") ?? 0 > 0)
        #expect(number(report, "state", "codable_decode_seconds") ?? 0 > 0)
        #expect(number(report, "state", "floor_seconds") ?? 0 > number(report, "state", "floor_build_seconds") ?? 0)
        // Each restart says what loaded it and where its encodings came from.
        let pauses = try #require((report["state"] as? [String: Any])?["pauses"] as? [[String: Any]])
        #expect(pauses.map { "\($0["load"] as? String ?? "-")/\($0["encoded_from"] as? String ?? "-")" }
                == ["disk/checkpoints", "disk/replica", "feed/loop_copies", "feed/replica", "fetch/loop_copies", "fetch/replica"])

        let failover = try #require(report["failover"] as? [String: Any])
        #expect(failover["skipped"] as? Bool == false, "etcd-server is installed by the deps step: \(failover)")
        #expect((failover["seconds"] as? [NSNumber])?.count == 1)
        #expect(number(report, "failover", "p50_seconds") ?? 0 > 0)
        #expect(checks["failover_1_exact"] == true)
        for key in ["unreplicated_per_second", "async_per_second", "sync_per_second"] { #expect(number(report, "failover", key) ?? 0 > 0, "failover.\(key)") }

        let python = try #require(report["python"] as? [String: Any])
        if python["skipped"] as? Bool == false {
            #expect(number(report, "python", "acked_per_second") ?? 0 > 0)
            #expect(checks["python_count"] == true)
        } else {
            #expect(python["reason"] is String)
        }
        // What the machine did during each phase: the bench's own processes used some CPU in
        // every one, and whatever others did is measured, never negative.
        let host = try #require(report["host"] as? [[String: Any]])
        #expect(host.map { $0["phase"] as? String } == ["baseline", "pipeline", "sync", "async", "effects", "clients", "latency", "snapshot",
                                                          "state", "memory", "durability", "pause", "failover", "python"])
        for phase in host {
            for key in ["seconds", "bench_cores"] { #expect(((phase[key] as? NSNumber)?.doubleValue ?? 0) > 0, "host \(key): \(phase)") }
            for key in ["others_cores", "interrupt_cores", "steal_cores"] { #expect(((phase[key] as? NSNumber)?.doubleValue ?? -1) >= 0, "host \(key): \(phase)") }
            #expect(phase["others_busy"] is Bool)
        }
        let ratios = try #require(report["ratios"] as? [String: [String: Any]])
        for key in ["sync_over_echo", "sync_over_pipeline", "async_over_echo", "async_over_pipeline", "limit_pipeline_over_echo",
                    "limit_async_pipeline_over_echo", "limit_pipeline_over_python", "ack_p50_over_rtt_p50", "ack_p99_over_rtt_p99", "sync_over_python", "memory_growth", "pause_longest_over_p99", "pause_workers_lost",
                    "state_largest_over_smallest", "state_late_join_over_raw_copy", "state_late_join_over_floor", "state_pause_replica_over_checkpoints", "state_feed_pause_replica_over_copied", "failover_p50_over_lease", "replication_sync_over_none",
                    "replication_async_over_none", "clients_most_over_one", "clients_most_over_pipeline", "limit_clients_pipeline_most_over_one"] {
            let ratio = try #require(ratios[key], "missing ratio \(key)")
            #expect(ratio["target"] is String)
            #expect(ratio["met"] != nil)
        }
        // The same run as a page: a chart per kind of figure, every ratio with its verdict, no script.
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.components(separatedBy: "<svg ").count - 1 == 5, "ratios, throughput, latency, pauses, memory")
        let plotted = ratios.values.filter { $0["value"] is NSNumber }.count
        #expect(html.components(separatedBy: ") met</text>").count - 1 + html.components(separatedBy: ") NOT MET</text>").count - 1 == plotted)
        #expect(html.contains("every correctness check passed"))
        #expect(!html.contains("<script"))
        #expect(benchChildren().isEmpty, "left behind: \(benchChildren())")
    }

    @Test func aPhaseSharedWithABusyProcessIsFlagged() async throws {
        // A loop beside the bench, not under it (under `timeout`, so it ends even if this test dies).
        let spinner = try ChildProcess.program(executable: "timeout", arguments: ["120", "sh", "-c", "while :; do :; done"], name: "spinner")
        let page = NSTemporaryDirectory() + "reactorbus-bench-busy-\(UUID().uuidString).html"
        defer { try? FileManager.default.removeItem(atPath: page) }
        let bench = try startBench(["--quick", "--json", "--only", "sync", "--actions", "20000", "--html", page], name: "bench-beside-a-loop")
        let status = await bench.waitForExit(timeout: .seconds(120))
        await spinner.stop()
        #expect(status == 0, "\(bench.diagnostics)")
        let line = try #require(bench.output.last(where: { $0.hasPrefix("{") }), "no JSON on stdout\(bench.diagnostics)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let host = try #require(report["host"] as? [[String: Any]])
        #expect(host.map { $0["phase"] as? String } == ["sync"])
        #expect(host.first?["others_busy"] as? Bool == true, "\(host)")
        #expect(((host.first?["others_cores"] as? NSNumber)?.doubleValue ?? 0) >= 0.1, "\(host)")
        // The table on stderr and the page both say it, next to the figures it lowered.
        let log = try String(contentsOfFile: bench.logPath, encoding: .utf8)
        #expect(log.contains("WARNING  processes outside the bench used"), "\(bench.diagnostics)")
        #expect(log.contains("OTHERS BUSY"))
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<p class=\"fail\">WARNING: processes outside the bench used"))
        // The checks still decide the exit status: a busy machine lowers figures, it breaks nothing.
        #expect(report["passed"] as? Bool == true)
    }

    @Test func anInterruptedRunStopsAndReapsItsChildren() async throws {
        let bench = try startBench(["--only", "sync,memory", "--actions", "5000000"], name: "bench-interrupted")
        // Wait until a phase is under way (its children are running), then interrupt. Only this
        // bench's own children count: other tests run processes of their own meanwhile.
        let deadline = ContinuousClock.now + .seconds(30)
        var children = Self.children(of: bench.pid)
        while children.count < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            children = Self.children(of: bench.pid)
        }
        #expect(children.count >= 2, "the bench started \(children.count) children\(bench.diagnostics)")
        bench.signal(SIGINT)
        let status = await bench.waitForExit(timeout: .seconds(20))
        #expect(status == 128 + SIGINT, "\(bench.diagnostics)")
        // The bench reaped its children before it exited: none of them may still run (the
        // bounded wait only lets /proc catch up).
        let stopDeadline = ContinuousClock.now + .seconds(2)
        var running = children.filter { Self.isRunning($0) }
        while !running.isEmpty && ContinuousClock.now < stopDeadline {
            try await Task.sleep(for: .milliseconds(20))
            running = children.filter { Self.isRunning($0) }
        }
        #expect(running.isEmpty, "left behind: \(running)")
    }

    /// The pids whose parent is `parent`, from /proc/PID/stat (field 4).
    static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // After "pid (comm)": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    /// Whether `pid` exists and is not a zombie.
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }
}
