import Testing
@testable import ReactorBus

@Suite struct WorkerHealthTests {
    @Test func aHealthyWorkerIsQuarantinedAtTheThresholdAndGetsNothing() {
        var health = WorkerHealth()
        #expect(health.capacity(trusted: 8) == 8)
        do { let result = health.timedOut(now: 10, quarantineAfter: 3, coolOff: 100); #expect(!result) }
        do { let result = health.timedOut(now: 10, quarantineAfter: 3, coolOff: 100); #expect(!result) }
        do { let result = health.timedOut(now: 10, quarantineAfter: 3, coolOff: 100); #expect(result) }
        #expect(health.state == .quarantined(until: 110))
        #expect(health.capacity(trusted: 8) == 0)
        // More timeouts while quarantined change nothing.
        do { let result = health.timedOut(now: 20, quarantineAfter: 3, coolOff: 100); #expect(!result) }
        #expect(health.state == .quarantined(until: 110))
        do { let result = health.wake(now: 109); #expect(!result) }
        do { let result = health.wake(now: 110); #expect(result) }
        #expect(health.state == .probation)
        #expect(health.capacity(trusted: 8) == 1)
    }

    @Test func eachRelapseDoublesTheCoolOffUpToThirtyTwoTimes() {
        var health = WorkerHealth()
        var now: UInt64 = 0
        var lengths: [UInt64] = []
        do { let result = health.timedOut(now: now, quarantineAfter: 1, coolOff: 100); #expect(result) }
        for _ in 0..<8 {
            guard case .quarantined(let until) = health.state else { Issue.record("not quarantined"); return }
            lengths.append(until - now)
            now = until
            do { let result = health.wake(now: now); #expect(result) }
            // On probation one timeout is enough, whatever the threshold.
            do { let result = health.timedOut(now: now, quarantineAfter: 1_000, coolOff: 100); #expect(result) }
        }
        #expect(lengths == [100, 200, 400, 800, 1_600, 3_200, 3_200, 3_200])
    }

    @Test func aJobInTimeEndsAProbationAndClearsTheRecord() {
        var health = WorkerHealth()
        do { let result = health.timedOut(now: 0, quarantineAfter: 1, coolOff: 100); #expect(result) }
        do { let result = health.wake(now: 100); #expect(result) }
        do { let result = health.reportedInTime(); #expect(result) }
        #expect(health == WorkerHealth())
        #expect(health.capacity(trusted: 8) == 8)
        // A healthy worker's report in time only resets the run of timeouts.
        do { let result = health.timedOut(now: 200, quarantineAfter: 2, coolOff: 100); #expect(!result) }
        do { let result = health.reportedInTime(); #expect(!result) }
        do { let result = health.timedOut(now: 300, quarantineAfter: 2, coolOff: 100); #expect(!result) }
        #expect(health.state == .healthy)
    }

    @Test func aHugeCoolOffSaturatesInsteadOfOverflowing() {
        var health = WorkerHealth()
        do { let result = health.timedOut(now: 5, quarantineAfter: 1, coolOff: UInt64.max / 2); #expect(result) }
        #expect(health.state == .quarantined(until: UInt64.max / 2 + 5))
        do { let result = health.wake(now: UInt64.max); #expect(result) }
        do { let result = health.timedOut(now: 5, quarantineAfter: 1, coolOff: UInt64.max / 2); #expect(result) }
        #expect(health.state == .quarantined(until: UInt64.max))
    }
}
