import MessagePack

/// Collects latency samples in nanoseconds and reports percentiles in microseconds.
///
/// Samples are kept (a few tens of thousands at most), so percentiles are exact: the p-th
/// percentile is the smallest sample with at least p% of the samples at or below it
/// (nearest-rank), which never invents a value that was not measured.
struct LatencyRecorder: Sendable {
    private(set) var samples: [UInt64] = []

    init(capacity: Int = 0) {
        samples.reserveCapacity(capacity)
    }

    /// Adds one sample.
    mutating func record(nanoseconds: UInt64) {
        samples.append(nanoseconds)
    }

    var count: Int { samples.count }

    /// The nearest-rank `percentile` (0...100) in microseconds; 0 without samples.
    func percentile(_ percentile: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        return Self.nearestRank(sorted, percentile)
    }

    /// The usual summary: p50, p90, p99, p99.9, min, max and mean, in microseconds.
    var summary: Summary {
        guard !samples.isEmpty else { return Summary() }
        let sorted = samples.sorted()
        let total = sorted.reduce(0.0) { $0 + Double($1) }
        return Summary(count: sorted.count, p50: Self.nearestRank(sorted, 50), p90: Self.nearestRank(sorted, 90),
                       p99: Self.nearestRank(sorted, 99), p999: Self.nearestRank(sorted, 99.9),
                       min: Double(sorted[0]) / 1_000, max: Double(sorted[sorted.count - 1]) / 1_000,
                       mean: total / Double(sorted.count) / 1_000)
    }

    /// Percentiles of a latency distribution, in microseconds.
    struct Summary: Sendable, Equatable {
        var count = 0
        var p50 = 0.0
        var p90 = 0.0
        var p99 = 0.0
        var p999 = 0.0
        var min = 0.0
        var max = 0.0
        var mean = 0.0

        var json: MessagePackValue {
            .object([
                ("samples", .whole(count)), ("p50_us", .number(p50)), ("p90_us", .number(p90)), ("p99_us", .number(p99)),
                ("p999_us", .number(p999)), ("min_us", .number(min)), ("max_us", .number(max)), ("mean_us", .number(mean)),
            ])
        }

        init(count: Int = 0, p50: Double = 0, p90: Double = 0, p99: Double = 0, p999: Double = 0, min: Double = 0, max: Double = 0, mean: Double = 0) {
            (self.count, self.p50, self.p90, self.p99, self.p999, self.min, self.max, self.mean) = (count, p50, p90, p99, p999, min, max, mean)
        }

        /// Reads a summary back from its JSON form.
        init?(json: MessagePackValue?) {
            guard let json, let count = json["samples"]?.intValue else { return nil }
            func value(_ key: String) -> Double { json[key]?.doubleValue ?? 0 }
            self.init(count: Int(count), p50: value("p50_us"), p90: value("p90_us"), p99: value("p99_us"), p999: value("p999_us"),
                      min: value("min_us"), max: value("max_us"), mean: value("mean_us"))
        }
    }

    private static func nearestRank(_ sorted: [UInt64], _ percentile: Double) -> Double {
        let clamped = Swift.min(Swift.max(percentile, 0), 100)
        let rank = Int((clamped / 100 * Double(sorted.count)).rounded(.up))
        let index = Swift.min(Swift.max(rank - 1, 0), sorted.count - 1)
        return Double(sorted[index]) / 1_000
    }
}
