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
        for milliseconds in 1 ... 300 { tally.effectDurations.append(.milliseconds(milliseconds)) }
        let room = tally.effectDurations.capacity

        tally.reset()

        #expect(tally.isEmpty)
        #expect(tally.effectDurations.isEmpty)
        #expect(tally.effectDurations.capacity == room)
        var metrics = WorkerMetrics()
        tally.add(to: &metrics, running: 7, queued: 8)
        #expect(metrics.jobsReceived == 0 && metrics.jobsDone == 0 && metrics.jobsFailed == 0 && metrics.mutationsEmitted == 0)
        #expect(metrics.combinedReports == 0 && metrics.bytesReceived == 0 && metrics.bytesSent == 0)
        #expect(metrics.running == 0 && metrics.queued == 0)
    }
}
