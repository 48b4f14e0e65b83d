import Foundation
import TestSupport

/// Phase 8: the sync pipeline against `examples/python/baseline_authority.py`, a straightforward
/// pyzmq + msgpack authority written from docs/PROTOCOL.md: the same client, observer, window
/// and action, so the two authorities can be compared directly.
///
/// Skipped (and said so in the report) when `python3` cannot import `zmq` and `msgpack`
/// (`scripts/ensure-deps.sh --python` installs them) or the script cannot be found.
enum PythonPhase {
    static func run(plan: BenchPlan, script explicitScript: String?, results: inout BenchResults) async throws {
        guard let script = explicitScript ?? locateScript() else {
            results.python = .skipped("examples/python/baseline_authority.py not found (run from the package, or give --python-script)")
            Output.error("bench: python — skipped: the baseline script was not found")
            return
        }
        let probe = try ChildProcess.spawn(executable: "python3", arguments: ["-c", "import zmq, msgpack"], name: "python-probe")
        guard await probe.waitForExit(timeout: .seconds(20)) == 0 else {
            results.python = .skipped("python3 cannot import zmq and msgpack (scripts/ensure-deps.sh --python installs them)")
            Output.error("bench: python — skipped: python3 with zmq and msgpack is not available")
            return
        }
        Output.error("bench: python — \(plan.pythonActions.grouped) countUp actions to the pyzmq baseline authority")
        let cluster = try await BenchCluster.external(app: "counter", executable: "python3",
                                                      arguments: [script, "--actions", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"],
                                                      name: "python-authority")
        let pipeline = try await cluster.run { cluster in
            try await PipelinePhase.measure(cluster, workload: "countUp", field: "count", count: plan.pythonActions, workers: 0,
                                            window: plan.window, minimumRate: 1_000)
        }
        results.python = .measured(pipeline)
        results.check("python_count", "python: observer's final count equals the actions sent", pipeline.isExact)
    }

    /// The script next to the sources: looked for from the working directory and upwards from
    /// the binary (`.build/<triple>/release/reactor-bench`).
    static func locateScript() -> String? {
        let relative = "examples/python/baseline_authority.py"
        var candidates = [FileManager.default.currentDirectoryPath + "/" + relative]
        var directory = URL(fileURLWithPath: BenchPaths.benchBinary).deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(directory.appendingPathComponent(relative).path)
            directory = directory.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }
}
