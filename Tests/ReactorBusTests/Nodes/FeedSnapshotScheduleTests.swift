@testable import ReactorBus
import Testing

/// When the feed's next snapshot is due, on the loop's millisecond clock: the first at once,
/// then after the policy's interval, or after the adaptive wait the last snapshot's encoding
/// cost sets, or by count of versions; never by time when the policy says so.
@Suite struct FeedSnapshotScheduleTests {
    @Test func theFirstSnapshotIsDueAtOnceUnlessThePolicyPublishesNoneByTime() {
        #expect(FeedSnapshotSchedule(policy: .adaptive).timeAllows(now: 0))
        #expect(FeedSnapshotSchedule(policy: FeedSnapshotPolicy(interval: .every(.seconds(5)))).timeAllows(now: 0))
        #expect(!FeedSnapshotSchedule(policy: .off).timeAllows(now: 0))
        #expect(!FeedSnapshotSchedule(policy: .off).timeAllows(now: .max))
    }

    @Test func anAdaptiveWaitIsTheEncodingCostOverTheShareCountedInMilliseconds() {
        // 5% of the loop's time: a snapshot that cost 10 µs to encode is followed 190 µs later,
        // which the millisecond clock shows as the next millisecond.
        var schedule = FeedSnapshotSchedule(policy: .adaptive)
        schedule.took(version: 4, costNanoseconds: 10_000, now: 7)
        #expect(schedule.lastVersion == 4)
        #expect(!schedule.timeAllows(now: 7))
        #expect(schedule.timeAllows(now: 8))
        // Encoded before (a request's): the last cost stands.
        schedule.took(version: 5, costNanoseconds: nil, now: 8)
        #expect(!schedule.timeAllows(now: 8) && schedule.timeAllows(now: 9))
        // A costlier snapshot waits longer: 2 ms at 5% is 38 ms.
        schedule.took(version: 6, costNanoseconds: 2_000_000, now: 10)
        #expect(!schedule.timeAllows(now: 47))
        #expect(schedule.timeAllows(now: 48))
    }

    @Test func aFixedIntervalCountsFromTheLastSnapshot() {
        var schedule = FeedSnapshotSchedule(policy: FeedSnapshotPolicy(interval: .every(.milliseconds(250))))
        schedule.took(version: 1, costNanoseconds: 5_000, now: 3)
        #expect(!schedule.timeAllows(now: 252))
        #expect(schedule.timeAllows(now: 253))
        // An interval longer than the clock counts is never over, and does not overflow.
        var never = FeedSnapshotSchedule(policy: FeedSnapshotPolicy(interval: .every(.seconds(Int64.max))))
        never.took(version: 1, costNanoseconds: 5_000, now: 3)
        #expect(!never.timeAllows(now: .max - 1))
    }

    @Test func aSnapshotIsDueByCountFromTheLastOnesVersion() {
        var schedule = FeedSnapshotSchedule(policy: FeedSnapshotPolicy(everyVersions: 100, interval: .off))
        #expect(schedule.dueAtVersion == 100)
        schedule.took(version: 130, costNanoseconds: 1_000, now: 1)
        #expect(schedule.dueAtVersion == 230)
        #expect(!schedule.timeAllows(now: .max))
        #expect(FeedSnapshotSchedule(policy: .adaptive).dueAtVersion == nil)
    }
}
