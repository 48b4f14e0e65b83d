@testable import ReactorBus
import Testing

/// When effects leave a worker's loop thread: one slice too long in CPU time, or too much of a
/// second. The clocks are the test's: `cpu` is what the thread's CPU clock reads.
@Suite struct EffectSliceWatchTests {
    let ms: UInt64 = 1_000_000

    /// One batch from `start` to `end` whose slices took `total` (the longest `longest`) and
    /// moved the thread's CPU clock from `cpuBefore` to `cpuAfter`.
    func batch(_ watch: inout EffectSliceWatch, start: UInt64, end: UInt64, longest: UInt64, total: UInt64,
               cpuBefore: UInt64, cpuAfter: UInt64) -> String? {
        watch.beforeBatch(now: start) { cpuBefore }
        return watch.afterBatch(longest: longest, total: total, now: end) { cpuAfter }
    }

    @Test func aSliceOfTenMillisecondsOfCPUMovesEffectsAtOnce() {
        var watch = EffectSliceWatch()
        #expect(batch(&watch, start: 0, end: 9 * ms, longest: 9 * ms, total: 9 * ms, cpuBefore: 0, cpuAfter: 9 * ms) == nil)
        #expect(batch(&watch, start: 100 * ms, end: 112 * ms, longest: 10 * ms, total: 12 * ms, cpuBefore: 20 * ms, cpuAfter: 32 * ms)
                == "effect code ran 10 ms on the loop thread without suspending")
    }

    @Test func aSliceLongOnTheClockButNotInCPUTimeIsAPauseAndKeepsEffects() {
        var watch = EffectSliceWatch()
        #expect(batch(&watch, start: 0, end: 40 * ms, longest: 40 * ms, total: 40 * ms, cpuBefore: 0, cpuAfter: 3 * ms) == nil)
        #expect(batch(&watch, start: 50 * ms, end: 75 * ms, longest: 25 * ms, total: 25 * ms, cpuBefore: 5 * ms, cpuAfter: 14 * ms) == nil)
    }

    @Test func theCPUClockIsReadBeforeABatchAtMostOnceAMillisecondAndAfterOneOnlyForALongSlice() {
        var watch = EffectSliceWatch()
        var readings = 0
        let read: () -> UInt64 = { readings += 1; return 0 }
        watch.beforeBatch(now: 0, cpuTime: read)
        _ = watch.afterBatch(longest: 1 * ms, total: 1 * ms, now: 1 * ms / 2, cpuTime: read)
        watch.beforeBatch(now: 1 * ms / 2, cpuTime: read)   // half a millisecond later: the reading stands
        _ = watch.afterBatch(longest: 1 * ms, total: 1 * ms, now: 1 * ms, cpuTime: read)
        // One before the first batch, one as the first batch opened the share's window.
        #expect(readings == 2)
        watch.beforeBatch(now: 2 * ms, cpuTime: read)
        _ = watch.afterBatch(longest: 12 * ms, total: 12 * ms, now: 14 * ms, cpuTime: read)
        #expect(readings == 4)
    }

    @Test func moreThanHalfOfASecondInSlicesMovesEffectsAtTheWindowsEnd() {
        var watch = EffectSliceWatch()
        // The first batch opens the window; 600 ms of 5 ms batches follow within it, each 5 ms
        // of the thread's CPU time too.
        #expect(batch(&watch, start: 0, end: 0, longest: 5 * ms, total: 5 * ms, cpuBefore: 0, cpuAfter: 5 * ms) == nil)
        for step in UInt64(1) ... 119 {
            #expect(batch(&watch, start: step * 8 * ms, end: step * 8 * ms, longest: 5 * ms, total: 5 * ms,
                          cpuBefore: step * 5 * ms, cpuAfter: (step + 1) * 5 * ms) == nil)
        }
        #expect(batch(&watch, start: 1_000 * ms, end: 1_000 * ms, longest: 5 * ms, total: 5 * ms, cpuBefore: 600 * ms, cpuAfter: 605 * ms)
                == "effects took 60% of the loop thread's time over 1000 ms")
    }

    @Test func halfOrLessOfASecondKeepsEffectsAndStartsANewWindow() {
        var watch = EffectSliceWatch()
        #expect(batch(&watch, start: 0, end: 0, longest: 1 * ms, total: 100 * ms, cpuBefore: 0, cpuAfter: 0) == nil)
        // 500 ms of 1,000: not more than half.
        #expect(batch(&watch, start: 1_000 * ms, end: 1_000 * ms, longest: 1 * ms, total: 400 * ms, cpuBefore: 0, cpuAfter: 400 * ms) == nil)
        // A new window from 1,000 ms: what came before no longer counts.
        #expect(batch(&watch, start: 1_900 * ms, end: 1_900 * ms, longest: 1 * ms, total: 450 * ms, cpuBefore: 400 * ms, cpuAfter: 850 * ms) == nil)
        #expect(batch(&watch, start: 2_000 * ms, end: 2_000 * ms, longest: 1 * ms, total: 100 * ms, cpuBefore: 850 * ms, cpuAfter: 960 * ms)
                == "effects took 55% of the loop thread's time over 1000 ms")
    }

    /// Slices that look long on the clock because the machine stopped the worker (seconds, in
    /// a loaded VM) are not a share of the loop's time: the thread's CPU time says so.
    @Test func aWindowLongOnTheClockButNotInCPUTimeKeepsEffects() {
        var watch = EffectSliceWatch()
        #expect(batch(&watch, start: 0, end: 0, longest: 1 * ms, total: 1 * ms, cpuBefore: 0, cpuAfter: 1 * ms) == nil)
        // 900 ms of slices on the clock, of which the thread ran 120 ms (the rest it was stopped).
        #expect(batch(&watch, start: 100 * ms, end: 1_000 * ms, longest: 9 * ms, total: 900 * ms, cpuBefore: 1 * ms, cpuAfter: 121 * ms) == nil)
        // The next window is judged on its own: busy on both clocks, effects move.
        #expect(batch(&watch, start: 1_100 * ms, end: 2_000 * ms, longest: 9 * ms, total: 900 * ms, cpuBefore: 121 * ms, cpuAfter: 1_001 * ms)
                == "effects took 90% of the loop thread's time over 1000 ms")
    }

    @Test func aLongIdleGapDilutesTheWindow() {
        var watch = EffectSliceWatch()
        #expect(batch(&watch, start: 0, end: 0, longest: 2 * ms, total: 300 * ms, cpuBefore: 0, cpuAfter: 0) == nil)
        #expect(batch(&watch, start: 5_000 * ms, end: 5_000 * ms, longest: 2 * ms, total: 300 * ms, cpuBefore: 0, cpuAfter: 0) == nil)
    }
}
