/// Metric families written in the Prometheus text exposition format, version 0.0.4.
///
/// Each family once, in the order first given: `# HELP`, `# TYPE`, then its samples; families
/// of the same name given more than once (the workers of a `run`, each with its own `node`
/// label) are written as one, their samples in the order given, the first one's help and type.
/// Histograms become cumulative `_bucket` series with an `le` label (`+Inf` last), `_sum` and
/// `_count`. Help text and label values are escaped as the format requires.
public enum PrometheusExposition {
    /// The `Content-Type` of the text this type writes.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The exposition of `families`.
    public static func text(_ families: [MetricFamily]) -> String {
        var merged: [MetricFamily] = []
        var index: [String: Int] = [:]
        for family in families {
            if let at = index[family.name] {
                merged[at].samples += family.samples
            } else {
                index[family.name] = merged.count
                merged.append(family)
            }
        }
        var out = ""
        for family in merged { write(family, to: &out) }
        return out
    }

    private static func write(_ family: MetricFamily, to out: inout String) {
        out += "# HELP \(family.name) \(escapeHelp(family.help))\n"
        out += "# TYPE \(family.name) \(family.kind.rawValue)\n"
        for sample in family.samples {
            switch sample.value {
            case .number(let value):
                out += "\(family.name)\(labels(sample.labels)) \(number(value))\n"
            case .histogram(let histogram):
                for (bucket, bound) in histogram.bounds.enumerated() {
                    out += "\(family.name)_bucket\(labels(sample.labels.adding("le", number(bound)))) \(histogram.cumulativeCount(through: bucket))\n"
                }
                out += "\(family.name)_bucket\(labels(sample.labels.adding("le", "+Inf"))) \(histogram.count)\n"
                out += "\(family.name)_sum\(labels(sample.labels)) \(number(histogram.sum))\n"
                out += "\(family.name)_count\(labels(sample.labels)) \(histogram.count)\n"
            }
        }
    }

    /// `{a="x",b="y"}`, or nothing without labels.
    private static func labels(_ labels: MetricLabels) -> String {
        guard !labels.pairs.isEmpty else { return "" }
        return "{" + labels.pairs.map { "\($0.name)=\"\(escapeLabelValue($0.value))\"" }.joined(separator: ",") + "}"
    }

    /// A value as the format writes it: whole numbers without a fraction (`3`, not `3.0`),
    /// others in Swift's shortest form that reads back exactly (`0.25`, `5e-05`), and
    /// `+Inf`, `-Inf`, `NaN`.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// Help text: backslash and line feed escaped.
    static func escapeHelp(_ text: String) -> String {
        var out = ""
        // By scalar: "\r\n" is one Character, and its line feed must be escaped too.
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A label value: backslash, double quote and line feed escaped.
    static func escapeLabelValue(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
