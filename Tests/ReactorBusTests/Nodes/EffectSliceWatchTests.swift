@testable import ReactorBus
import Testing

/// When effects leave a worker's loop thread: one slice too long, or too much of a second.
@Suite struct EffectSliceWatchTests {
    let ms: UInt64 = 1_000_000

    @Test func aSliceOfTenMillisecondsMovesEffectsAtOnce() {
        var watch = EffectSliceWatch()
        #expect(watch.record(longest: 9 * ms, cpu: 9 * ms, now: 100 * ms) == nil)
        #expect(watch.record(longest: 10 * ms, cpu: 12 * ms, now: 200 * ms) == "an effect ran 10 ms without suspending")
    }

    @Test func aSliceLongOnTheClockButNotInCPUTimeIsAPauseAndKeepsEffects() {
        var watch = EffectSliceWatch()
        #expect(watch.record(longest: 40 * ms, cpu: 3 * ms, now: 100 * ms) == nil)
        #expect(watch.record(longest: 25 * ms, cpu: 9 * ms, now: 200 * ms) == nil)
    }

    @Test func moreThanHalfOfASecondInSlicesMovesEffectsAtTheWindowsEnd() {
        var watch = EffectSliceWatch()
        // The first batch opens the window; 600 ms of 5 ms slices follow within it.
        #expect(watch.record(longest: 5 * ms, cpu: 5 * ms, now: 0) == nil)
        for step in 1 ... 119 { #expect(watch.record(longest: 5 * ms, cpu: 5 * ms, now: UInt64(step) * 8 * ms) == nil) }
        #expect(watch.record(longest: 5 * ms, cpu: 5 * ms, now: 1_000 * ms) == "effects took 60% of the loop thread's time over 1000 ms")
    }

    @Test func halfOrLessOfASecondKeepsEffectsAndStartsANewWindow() {
        var watch = EffectSliceWatch()
        #expect(watch.record(longest: 1 * ms, cpu: 100 * ms, now: 0) == nil)
        #expect(watch.record(longest: 1 * ms, cpu: 400 * ms, now: 1_000 * ms) == nil)   // 500 ms of 1,000: not more than half
        // A new window from 1,000 ms: what came before no longer counts.
        #expect(watch.record(longest: 1 * ms, cpu: 450 * ms, now: 1_900 * ms) == nil)
        #expect(watch.record(longest: 1 * ms, cpu: 100 * ms, now: 2_000 * ms) == "effects took 55% of the loop thread's time over 1000 ms")
    }

    @Test func aLongIdleGapDilutesTheWindow() {
        var watch = EffectSliceWatch()
        #expect(watch.record(longest: 2 * ms, cpu: 300 * ms, now: 0) == nil)
        #expect(watch.record(longest: 2 * ms, cpu: 300 * ms, now: 5_000 * ms) == nil)
    }
}
