import Testing
import ZeroMQ

/// Durations in whole units never wrap around: too large is `UInt64.max` (never reached), not a
/// small number (a deadline in the past), and a negative one is 0.
@Suite struct MonotonicClockTests {
    @Test func wholeUnitsRoundDownAndSaturate() {
        #expect((Duration.seconds(2) + .nanoseconds(5)).wholeNanoseconds == 2_000_000_005)
        #expect((Duration.milliseconds(1_500) + .microseconds(999)).wholeMilliseconds == 1_500)
        #expect(Duration.seconds(-1).wholeNanoseconds == 0)
        #expect(Duration.nanoseconds(-1).wholeMilliseconds == 0)
        // 18,446,744,073 s is the last whole second that fits in nanoseconds.
        #expect(Duration.seconds(18_446_744_073).wholeNanoseconds == 18_446_744_073_000_000_000)
        #expect((Duration.seconds(18_446_744_073) + .milliseconds(710)).wholeNanoseconds == .max)
        #expect(Duration.seconds(Int64.max).wholeNanoseconds == .max)
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == .max)
    }

    @Test func aSaturatingSumStopsAtTheLargestValue() {
        #expect(UInt64(5).saturatingAdd(7) == 12)
        #expect((UInt64.max - 1).saturatingAdd(1) == .max)
        #expect(UInt64.max.saturatingAdd(UInt64.max) == .max)
    }

    @Test func theClockMovesForward() {
        let first = MonotonicClock.nanoseconds()
        let second = MonotonicClock.nanoseconds()
        #expect(second >= first)
        #expect(MonotonicClock.milliseconds() >= first / 1_000_000)
    }
}
