import ReactorMetrics
import Testing

@Suite struct HistogramTests {
    @Test func observationsLandInTheFirstBucketWhoseBoundHoldsThem() {
        var histogram = Histogram(bounds: [0.1, 1, 10])
        for value in [0.05, 0.1, 0.5, 1, 3, 10, 11, 1_000] { histogram.observe(value) }
        #expect((0...3).map { histogram.cumulativeCount(through: $0) } == [2, 4, 6, 8])
        #expect(histogram.count == 8)
        #expect(histogram.sum == 0.05 + 0.1 + 0.5 + 1 + 3 + 10 + 11 + 1_000)
    }

    @Test func repeatedObservationsCountAsManyWithTheirWholeSum() {
        var histogram = Histogram(bounds: [1, 2])
        histogram.observe(1.5, times: 4)
        histogram.observe(0.5, times: 0)
        histogram.observe(.nan)
        #expect((0...2).map { histogram.cumulativeCount(through: $0) } == [0, 4, 4])
        #expect(histogram.count == 4)
        #expect(histogram.sum == 6)
    }

    @Test func durationsAreObservedInSeconds() {
        var histogram = Histogram(bounds: Histogram.Bounds.latency)
        histogram.observe(Duration.microseconds(300))
        histogram.observe(Duration.seconds(2))
        #expect(histogram.sum == 2.0003)
        // 300 µs is above 250 µs (index 2) and within 500 µs (index 3); 2 s within 2.5 s (index 14).
        #expect(histogram.cumulativeCount(through: 2) == 0)
        #expect(histogram.cumulativeCount(through: 3) == 1)
        #expect(histogram.cumulativeCount(through: 13) == 1)
        #expect(histogram.cumulativeCount(through: 14) == 2)
    }

    @Test func mergingAddsCountsAndSums() {
        var one = Histogram(bounds: [1])
        var other = Histogram(bounds: [1])
        one.observe(0.5)
        other.observe(2)
        other.observe(0.25)
        one.merge(other)
        #expect(one.cumulativeCount(through: 0) == 2)
        #expect(one.count == 3)
        #expect(one.sum == 2.75)
        var expected = Histogram(bounds: [1])
        for value in [0.5, 2, 0.25] { expected.observe(value) }
        #expect(one == expected)
        #expect(one != Histogram(bounds: [1]))
    }

    @Test func presetsFitTheInlineStorage() {
        #expect(Histogram.Bounds.latency.count == Histogram.maxBuckets)
        #expect(Histogram.Bounds.duration.count == Histogram.maxBuckets)
    }
}
