import Foundation

/// The bench run as one self-contained HTML page: every ratio against its target, the
/// throughput and latency figures against their raw baselines, the pauses with and without
/// snapshots, the memory curve, then the full table and the checks. Inline SVG and CSS only: no
/// script, no network.
struct BenchHTMLReport {
    let report: BenchReport

    static let met = "#2e7d32"
    static let missed = "#c62828"
    static let baseline = "#757575"
    static let reactor = "#1565c0"

    /// The charts for the phases that ran, in page order.
    var charts: [SVGBarChart] {
        let results = report.results
        var charts: [SVGBarChart] = []
        let ratios = report.ratios.filter { $0.value != nil }
        if !ratios.isEmpty {
            charts.append(SVGBarChart(title: "Each ratio against its target (log scale; the line is the target)", bars: ratios.map { ratio in
                let value = ratio.value ?? 0
                // Plotted as value / target, so that every target is the same line.
                let relative = ratio.target > 0 ? value / ratio.target : (value == 0 ? 1 : 64)
                let verdict = ratio.met == true ? "met" : "NOT MET"
                return .init(label: ratio.title, value: relative, note: "\(BenchReport.Ratio.format(value))x (\(ratio.comparison) \(BenchReport.Ratio.format(ratio.target))x) \(verdict)",
                             color: ratio.met == true ? Self.met : Self.missed)
            }, logarithmic: true, reference: (1, "target")))
        }
        var throughput: [SVGBarChart.Bar] = []
        if let baseline = results.baseline {
            throughput.append(.init(label: "raw echo (libzmq)", value: baseline.echoPerSecond, note: Self.rate(baseline.echoPerSecond, "msg/s"), color: Self.baseline))
        }
        if let pipeline = results.pipelineBaseline {
            throughput.append(.init(label: "libzmq + msgpack-c: countUp acked", value: pipeline.ackedPerSecond, note: Self.rate(pipeline.ackedPerSecond, "actions/s"), color: Self.baseline))
        }
        if let sync = results.sync { throughput.append(.init(label: "sync: countUp acked", value: sync.ackedPerSecond, note: Self.rate(sync.ackedPerSecond, "actions/s"), color: Self.reactor)) }
        if let pipeline = results.pipelineAsyncBaseline {
            throughput.append(.init(label: "libzmq + msgpack-c: effects applied", value: pipeline.appliedPerSecond, note: Self.rate(pipeline.appliedPerSecond, "actions/s"), color: Self.baseline))
        }
        if let async = results.async { throughput.append(.init(label: "async: effects applied", value: async.appliedPerSecond, note: Self.rate(async.appliedPerSecond, "actions/s"), color: Self.reactor)) }
        for outcome in results.durability {
            throughput.append(.init(label: "--fsync \(outcome.policy)", value: outcome.ackedPerSecond, note: Self.rate(outcome.ackedPerSecond, "actions/s"), color: Self.reactor))
        }
        if case .measured(let python)? = results.python {
            throughput.append(.init(label: "Python authority", value: python.ackedPerSecond, note: Self.rate(python.ackedPerSecond, "actions/s"), color: Self.baseline))
        }
        if !throughput.isEmpty { charts.append(SVGBarChart(title: "Throughput", bars: throughput)) }
        if let latency = results.latency {
            charts.append(SVGBarChart(title: "Latency, one action in flight (µs; log scale, the line is the raw p50)", bars: [
                .init(label: "raw round trip p50", value: latency.rawPaired.p50, note: Self.micro(latency.rawPaired.p50), color: Self.baseline),
                .init(label: "action -> ack p50", value: latency.ack.p50, note: Self.micro(latency.ack.p50), color: Self.reactor),
                .init(label: "raw round trip p99", value: latency.rawPaired.p99, note: Self.micro(latency.rawPaired.p99), color: Self.baseline),
                .init(label: "action -> ack p99", value: latency.ack.p99, note: Self.micro(latency.ack.p99), color: Self.reactor),
                .init(label: "action -> observer p50", value: latency.observed.p50, note: Self.micro(latency.observed.p50), color: Self.reactor),
                .init(label: "action -> observer p99", value: latency.observed.p99, note: Self.micro(latency.observed.p99), color: Self.reactor),
            ], logarithmic: true, reference: (latency.rawPaired.p50, "raw p50")))
        }
        if !results.pause.isEmpty {
            let p99Without = results.pause.first { $0.snapshotEvery == nil }?.rtt.p99
            charts.append(SVGBarChart(title: "Ping round trips under load, without and with snapshots (µs; log scale, the line is the p99 without)", bars: results.pause.flatMap { run -> [SVGBarChart.Bar] in
                let label = run.snapshotEvery == nil ? "no snapshots" : "snapshots"
                return [("p50", run.rtt.p50), ("p99", run.rtt.p99), ("max", run.rtt.max)].map { name, value in
                    .init(label: "\(label): \(name)", value: value, note: Self.micro(value), color: run.snapshotEvery == nil ? Self.baseline : Self.reactor)
                }
            }, logarithmic: p99Without != nil, reference: p99Without.map { ($0, "p99 without snapshots") }))
        }
        if let memory = results.memory, !memory.samples.isEmpty {
            charts.append(SVGBarChart(title: "Authority RSS while it takes \(memory.actions.grouped) actions (MiB)", bars: memory.samples.map { sample in
                .init(label: "after \(sample.acked.grouped) acked", value: Double(sample.rssKiB) / 1_024, note: "\(sample.rssKiB / 1_024) MiB", color: Self.reactor)
            }))
        }
        return charts
    }

    /// The page.
    var html: String {
        let results = report.results
        let rows = report.rows.map { row in
            "<tr><td>\(SVGBarChart.escape(row.0))</td><td>\(SVGBarChart.escape(row.1))</td><td>\(SVGBarChart.escape(row.2))</td></tr>"
        }
        // A phase that shared the machine with busy processes says so above the charts it skews.
        let warnings = results.host.filter(\.othersWereBusy).map { "<p class=\"fail\">WARNING: \(SVGBarChart.escape($0.warning))</p>" }
        let checks = results.checks.map { "<li class=\"\($0.passed ? "pass" : "fail")\">\($0.passed ? "PASS" : "FAIL") \(SVGBarChart.escape($0.name))</li>" }
            + results.failures.map { "<li class=\"fail\">FAIL \(SVGBarChart.escape($0.phase)): \(SVGBarChart.escape($0.message))</li>" }
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>ReactorBus benchmark</title>
        <style>
        body { font-family: sans-serif; margin: 2em; color: #222; }
        svg { display: block; margin: 1.5em 0; font-size: 12px; }
        .chart-title { font-weight: bold; font-size: 14px; }
        table { border-collapse: collapse; margin: 1em 0; }
        td, th { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: left; }
        .pass { color: \(Self.met); } .fail { color: \(Self.missed); }
        </style>
        </head>
        <body>
        <h1>ReactorBus benchmark</h1>
        <p class="\(results.passed ? "pass" : "fail")">\(results.plan.quick ? "Quick run" : "Full run"), every role in its own process on loopback; \(results.passed ? "every correctness check passed" : "a correctness check FAILED"). Ratios are taken against raw libzmq and msgpack-c figures measured in the same run.</p>
        \(warnings.joined(separator: "\n"))
        \(charts.map(\.svg).joined(separator: "\n"))
        <h2>Every figure</h2>
        <table>
        <tr><th>phase</th><th>figure</th><th>value</th></tr>
        \(rows.joined(separator: "\n"))
        </table>
        <h2>Checks</h2>
        <ul>
        \(checks.joined(separator: "\n"))
        </ul>
        </body>
        </html>

        """
    }

    private static func rate(_ value: Double, _ unit: String) -> String { "\(Int(value.rounded()).grouped) \(unit)" }

    private static func micro(_ value: Double) -> String { String(format: value >= 100 ? "%.0f µs" : "%.1f µs", value) }
}
