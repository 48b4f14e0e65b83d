/// Label names and values of one series, in the order they are written.
///
/// Names follow `[a-zA-Z_][a-zA-Z0-9_]*` and are chosen by the code, never by input; values
/// may be anything (the exposition escapes them).
public struct MetricLabels: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// The pairs, in order.
    public private(set) var pairs: [(name: String, value: String)]

    /// Labels from pairs, in their order.
    public init(_ pairs: [(name: String, value: String)]) {
        self.pairs = pairs
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        pairs = elements.map { (name: $0.0, value: $0.1) }
    }

    /// These labels and one more after them.
    public func adding(_ name: String, _ value: String) -> MetricLabels {
        var copy = self
        copy.pairs.append((name, value))
        return copy
    }

    public static func == (lhs: MetricLabels, rhs: MetricLabels) -> Bool {
        lhs.pairs.count == rhs.pairs.count && zip(lhs.pairs, rhs.pairs).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
