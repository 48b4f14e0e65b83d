@testable import ReactorBus
import Testing

@Suite struct WorkerTurnTallyTests {
    @Test func aResetTallyCountsNothingAndKeepsRoomForTheNextTurnsDurations() {
        var tally = WorkerTurnTally()
        tally.jobsReceived = 3
        tally.jobsDone = 2
        tally.jobsFailed = 1
        tally.mutationsEmitted = 4
        tally.combinedReports = 2
        tally.bytesReceived = 100
        tally.bytesSent = 50
        tally.countsChanged = true
        for milliseconds in UInt64(1) ... 300 { tally.effectNanoseconds.append(milliseconds * 1_000_000) }
        let room = tally.effectNanoseconds.capacity

        tally.reset()

        #expect(tally.isEmpty)
        #expect(tally.effectNanoseconds.isEmpty)
        #expect(tally.effectNanoseconds.capacity == room)
        var metrics = WorkerMetrics()
        tally.add(to: &metrics, running: 7, queued: 8)
        #expect(metrics.jobsReceived == 0 && metrics.jobsDone == 0 && metrics.jobsFailed == 0 && metrics.mutationsEmitted == 0)
        #expect(metrics.combinedReports == 0 && metrics.bytesReceived == 0 && metrics.bytesSent == 0)
        #expect(metrics.running == 0 && metrics.queued == 0)
    }

    @Test func finishedJobsNanosecondsReachTheHistogramInSeconds() {
        var tally = WorkerTurnTally()
        tally.effectNanoseconds = [1_000_000, 20_000_000, 2_000_000_000]
        var metrics = WorkerMetrics()
        tally.add(to: &metrics, running: 0, queued: 0)
        #expect(metrics.effectDuration.count == 3)
        #expect(abs(metrics.effectDuration.sum - 2.021) < 1e-9)
        // Buckets (seconds) 0.0005, 0.001, ..., 0.01, 0.025, ..., 1, 2.5: 1 ms is in the second,
        // 20 ms in the sixth, 2 s in the twelfth.
        #expect(metrics.effectDuration.bounds[1] == 0.001 && metrics.effectDuration.bounds[5] == 0.025)
        #expect(metrics.effectDuration.cumulativeCount(through: 0) == 0)
        #expect(metrics.effectDuration.cumulativeCount(through: 1) == 1)
        #expect(metrics.effectDuration.cumulativeCount(through: 4) == 1)
        #expect(metrics.effectDuration.cumulativeCount(through: 5) == 2)
        #expect(metrics.effectDuration.cumulativeCount(through: 10) == 2)
        #expect(metrics.effectDuration.cumulativeCount(through: 11) == 3)
    }
}
