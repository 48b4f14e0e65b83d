/// One metric as Prometheus sees it: a name, a help line, a type, and its samples (one per set
/// of label values).
public struct MetricFamily: Sendable, Equatable {
    /// The metric types this package exposes.
    public enum Kind: String, Sendable {
        /// Only goes up (resets when the process restarts); its name ends in `_total`.
        case counter
        /// A value now, up or down.
        case gauge
        /// Observations in buckets, exposed as `_bucket`, `_sum` and `_count` series.
        case histogram
    }

    /// The metric's name (`reactorbus_actions_accepted_total`): `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    public var name: String
    /// One line saying what it counts.
    public var help: String
    public var kind: Kind
    public var samples: [MetricSample]

    /// A family with its samples.
    public init(name: String, help: String, kind: Kind, samples: [MetricSample]) {
        self.name = name
        self.help = help
        self.kind = kind
        self.samples = samples
    }

    /// A counter with one sample.
    public static func counter(_ name: String, _ help: String, labels: MetricLabels, _ value: UInt64) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .counter, samples: [MetricSample(labels: labels, value: .number(Double(value)))])
    }

    /// A gauge with one sample.
    public static func gauge(_ name: String, _ help: String, labels: MetricLabels, _ value: Double) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .gauge, samples: [MetricSample(labels: labels, value: .number(value))])
    }

    /// A histogram with one sample.
    public static func histogram(_ name: String, _ help: String, labels: MetricLabels, _ value: Histogram) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .histogram, samples: [MetricSample(labels: labels, value: .histogram(value))])
    }
}

/// One series of a ``MetricFamily``: its label values and its value.
public struct MetricSample: Sendable, Equatable {
    /// A number for counters and gauges, a ``Histogram`` for histograms.
    public enum Value: Sendable, Equatable {
        case number(Double)
        case histogram(Histogram)
    }

    public var labels: MetricLabels
    public var value: Value

    public init(labels: MetricLabels, value: Value) {
        self.labels = labels
        self.value = value
    }
}
