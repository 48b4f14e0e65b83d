/// Observations counted into fixed buckets, with their sum: what a Prometheus histogram exposes.
///
/// A plain value with its counts stored inline (no heap), so a node's loop can keep one in its
/// metrics, copy it to other threads after every turn and observe into it again at no cost
/// beyond a few additions. Buckets are fixed when it is made: a ``Bounds`` preset or up to
/// ``maxBuckets`` ascending upper bounds of one's own; one more bucket, above the last bound,
/// counts the rest (Prometheus's `le="+Inf"`).
public struct Histogram: Sendable {
    /// The most finite upper bounds a histogram may have.
    public static let maxBuckets = 16

    /// Named sets of upper bounds, in seconds.
    public enum Bounds {
        /// For what takes microseconds to a few seconds: acks, fsyncs (50 µs ... 5 s).
        public static let latency: [Double] = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
        /// For what takes milliseconds to a minute: effects, snapshot writes (0.5 ms ... 60 s).
        public static let duration: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    }

    /// The finite upper bounds, ascending; an observation equal to a bound counts in its bucket.
    public let bounds: [Double]
    /// Observations per bucket (not cumulative); the one after the last bound is `+Inf`'s.
    private var counts: InlineArray<17, UInt64> = .init(repeating: 0)
    /// The sum of every observation.
    public private(set) var sum: Double = 0
    /// How many observations there were.
    public private(set) var count: UInt64 = 0

    /// An empty histogram with these upper bounds (ascending, finite, at most ``maxBuckets``).
    public init(bounds: [Double]) {
        precondition(bounds.count <= Self.maxBuckets, "a histogram has at most \(Self.maxBuckets) bounds")
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 } && bounds.allSatisfy(\.isFinite), "bounds must be finite and ascending")
        self.bounds = bounds
    }

    /// Counts `times` observations of `value` (a batch of acks that waited as long).
    public mutating func observe(_ value: Double, times: UInt64 = 1) {
        guard times > 0, !value.isNaN else { return }
        var bucket = 0
        while bucket < bounds.count, value > bounds[bucket] { bucket += 1 }
        counts[bucket] &+= times
        count &+= times
        sum += value * Double(times)
    }

    /// Counts one observation of a duration, in seconds.
    public mutating func observe(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Adds `other`'s observations (which must have the same bounds) to these.
    public mutating func merge(_ other: Histogram) {
        precondition(other.bounds == bounds, "only histograms with the same bounds merge")
        for bucket in 0...bounds.count { counts[bucket] &+= other.counts[bucket] }
        count &+= other.count
        sum += other.sum
    }

    /// Observations at most `bounds[bucket]`; for `bucket == bounds.count`, every observation.
    public func cumulativeCount(through bucket: Int) -> UInt64 {
        var total: UInt64 = 0
        for index in 0...min(bucket, bounds.count) { total &+= counts[index] }
        return total
    }
}

extension Histogram: Equatable {
    public static func == (lhs: Histogram, rhs: Histogram) -> Bool {
        guard lhs.bounds == rhs.bounds, lhs.count == rhs.count, lhs.sum == rhs.sum else { return false }
        return (0...lhs.bounds.count).allSatisfy { lhs.counts[$0] == rhs.counts[$0] }
    }
}

extension Histogram: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bounds)
        hasher.combine(count)
        hasher.combine(sum)
        for bucket in 0...bounds.count { hasher.combine(counts[bucket]) }
    }
}
