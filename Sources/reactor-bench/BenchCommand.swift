import ArgumentParsing
import Foundation
import Glibc
import MessagePack
import TestSupport
import SystemCalls

/// `reactor-bench`: measures the reactor against raw libzmq, on loopback, with every role in
/// its own process.
///
/// Phases, in order: raw libzmq baseline, sync pipeline, async pipeline through workers,
/// latency, snapshot cost of a large state, actions and late joiners at state sizes up to 64 MiB,
/// the authority's memory, durability under each
/// fsync policy, the loop's pauses while snapshots are written, and the same pipeline against
/// a Python authority. Each phase starts its own
/// children (the real `reactor-node authority` and `reactor-node worker`, and this binary again
/// in its `peer` roles), has a time limit, and stops and reaps them whatever happens; SIGINT stops
/// every child too. Each phase also records what else the machine did meanwhile
/// (``HostActivity``). Progress goes to stderr; the table (or, with `--json`, one JSON object)
/// to stdout. Exit 1 when a correctness check fails or a phase cannot finish; missed performance
/// targets are reported only.
enum BenchCommand {
    static let spec = Command(
        name: "reactor-bench",
        summary: "measure throughput, latency and memory against raw ZeroMQ, every role in its own process",
        options: [
            .flag("quick", help: "a fifth of the counts: about 20 seconds instead of about a minute"),
            .flag("json", help: "print one JSON object with every figure instead of the table (the table goes to stderr)"),
            .value("html", "FILE", help: "also write the report as an HTML page with charts (make bench: .build/bench-report.html)"),
            .value("actions", "N", help: "base action count (sync phase; the others scale from it)").hidden(),
            .value("messages", "N", help: "messages per raw throughput test").hidden(),
            .value("samples", "N", help: "round trips and latency samples").hidden(),
            .value("worker-concurrency", "N", help: "effects each worker runs at once", default: "256").hidden(),
            .value("only", "PHASES", help: "comma-separated phases to run").hidden(),
            .value("state-sizes", "B1,B2,...", help: "the state phase's sizes in bytes, smallest first").hidden(),
            .value("python-script", "FILE", help: "the Python baseline authority").hidden(),
            .value("snapshot-dir", "DIR", help: "the pause phase's authority keeps its snapshots under DIR (e.g. another filesystem than the journal's)").hidden(),
        ],
        discussion: """
        Phases: baseline (raw libzmq PUB->SUB, DEALER<->ROUTER round trips, pipelined echo),
        pipeline (the same pipelines on libzmq and msgpack-c calls alone, no reactor), sync, async
        (2 workers), effects (10 ms effects through 1, 2 and 4 workers), clients (1 to 1,000 at
        once), latency, snapshot (a 10,000-item state), state (1 KiB, 1 MiB, 64 MiB catalog
        states, a late joiner, restarts with disk and feed snapshots and fetches; --quick: 16 MiB), memory,
        durability (--fsync always|batch|none), pause (ping round trips under load, without and
        with snapshots), failover (elected authorities on etcd, if /usr/bin/etcd is there), python
        (examples/python/baseline_authority.py, if python3 has zmq and msgpack).
        Each phase also reports what the machine did meanwhile (cores used by the bench, by other
        processes, by interrupts, stolen by the hypervisor) and warns when other processes were
        busy. Exit 1 when a correctness check fails or a phase cannot finish in its time;
        performance targets are only reported, as met or not met.
        """,
        program: "reactor-bench"
    )

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        func optionalCount(_ name: String) throws -> Int? {
            arguments.string(name) == nil ? nil : try arguments.requiredInt(name, in: 1...100_000_000)
        }
        var plan = BenchPlan(quick: arguments.flag("quick"), actions: try optionalCount("actions"), messages: try optionalCount("messages"),
                             samples: try optionalCount("samples"), workerConcurrency: try arguments.requiredInt("worker-concurrency", in: 1...10_000))
        if let only = arguments.string("only") {
            plan.only = Set(only.split(separator: ",").map(String.init))
            guard plan.only.isSubset(of: BenchPlan.phases) else {
                throw UsageError("--only takes phases among \(BenchPlan.phases.joined(separator: ","))")
            }
        }
        if let sizes = arguments.string("state-sizes") {
            let parsed = sizes.split(separator: ",").compactMap { Int($0) }
            guard !parsed.isEmpty, parsed.count == sizes.split(separator: ",").count, parsed.allSatisfy({ (64...(1 << 31)).contains($0) }) else {
                throw UsageError("--state-sizes takes sizes in bytes like 1024,1048576 (each 64 to 2147483648)")
            }
            plan.stateSizes = parsed
        }
        plan.snapshotDirectory = arguments.string("snapshot-dir")
        let json = arguments.flag("json")
        let pythonScript = arguments.string("python-script")

        try BenchPaths.checkReactorNode()
        // A thousand clients at once take a socket and more each, here and in the authority (its
        // child, which inherits the limit): raise the soft limit on open files to the hard one.
        var files = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max {
            files.rlim_cur = min(files.rlim_max, 65_536)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        }
        let trap = SignalTrap { signal in
            Output.error("bench: signal \(signal): stopping every child process")
            ChildRegistry.shared.stopAll(grace: .seconds(3))
            BenchPaths.removeRunDirectory()
            _exit(128 + signal)
        }
        defer {
            _ = trap
            ChildRegistry.shared.stopAll(grace: .seconds(3))
            BenchPaths.removeRunDirectory()
        }

        let started = ContinuousClock.now
        var results = BenchResults(plan: plan, sizes: try WireSizes.measure(magnitude: plan.syncActions / 2))
        Output.error("bench: \(plan.quick ? "quick run" : "full run") on loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores; children log to \(BenchPaths.runDirectory)")

        func phase(_ name: String, _ body: (inout BenchResults) async throws -> Void) async {
            guard plan.runs(name) else { return }
            let phaseStart = ContinuousClock.now
            let hostBefore = HostActivity.Reading.now()
            do {
                try await body(&results)
            } catch {
                results.failures.append((name, String(describing: error)))
                Output.error("bench: \(name) failed: \(error)")
            }
            Output.error("bench: \(name) took \(String(format: "%.1f", Double((ContinuousClock.now - phaseStart).components.seconds) + Double((ContinuousClock.now - phaseStart).components.attoseconds) / 1e18)) s")
            if let hostBefore, let hostAfter = HostActivity.Reading.now(), let host = HostActivity(phase: name, from: hostBefore, to: hostAfter) {
                results.host.append(host)
                Output.error("bench:   host: \(host.summary)")
                if host.othersWereBusy { Output.error("bench: warning: \(host.warning)") }
            }
        }

        await phase("baseline") { results in results.baseline = try await BaselinePhase.run(plan: plan, sizes: results.sizes) }
        await phase("pipeline") { results in try await PipelinePhase.limit(plan: plan, results: &results) }
        await phase("sync") { results in try await PipelinePhase.sync(plan: plan, results: &results) }
        await phase("async") { results in try await PipelinePhase.async(plan: plan, results: &results) }
        await phase("effects") { results in try await EffectsPhase.run(plan: plan, results: &results) }
        await phase("clients") { results in try await ClientsPhase.run(plan: plan, results: &results) }
        await phase("latency") { results in try await LatencyPhase.run(plan: plan, results: &results) }
        await phase("snapshot") { results in try await SnapshotPhase.run(plan: plan, results: &results) }
        await phase("state") { results in try await StatePhase.run(plan: plan, results: &results) }
        await phase("memory") { results in try await MemoryPhase.run(plan: plan, results: &results) }
        await phase("durability") { results in try await DurabilityPhase.run(plan: plan, results: &results) }
        await phase("pause") { results in try await PausePhase.run(plan: plan, results: &results) }
        await phase("failover") { results in try await FailoverPhase.run(plan: plan, results: &results) }
        await phase("python") { results in try await PythonPhase.run(plan: plan, script: pythonScript, results: &results) }

        let report = BenchReport(results: results)
        if let path = arguments.string("html") {
            do {
                try BenchHTMLReport(report: report).html.write(toFile: path, atomically: true, encoding: .utf8)
                Output.error("bench: report with charts written to \(path)")
            } catch {
                Output.error("bench: cannot write the HTML report to \(path): \(error)")
            }
        }
        let elapsed = ContinuousClock.now - started
        Output.error("bench: done in \(elapsed.components.seconds) s")
        if json {
            Output.error(report.table)
            Output.line(report.json.rendered)
        } else {
            Output.line(report.table)
        }
        return results.passed ? 0 : 1
    }
}
