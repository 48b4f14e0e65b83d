import ReactorTesting
import Testing

/// The test clock: sleeps end at once and move its time on; a deadline already past waits zero;
/// a cancelled task's sleep throws. (EffectClockTests bind it as `EffectClock.current`.)
@Suite struct ImmediateClockTests {
    @Test func sleepsEndAtOnceAndMoveTheTimeOnInOrder() async throws {
        let clock = ImmediateClock()
        let start = clock.now
        try await clock.sleep(for: .seconds(90))
        try await clock.sleep(until: start + .seconds(30))   // already past: no time passes
        try await clock.sleep(for: .milliseconds(5))
        #expect(clock.sleeps == [.seconds(90), .zero, .milliseconds(5)])
        #expect(clock.now - start == .seconds(90) + .milliseconds(5))
    }

    @Test func aCancelledTasksSleepThrowsAndLeavesTheTimeAlone() async {
        let clock = ImmediateClock()
        let start = clock.now
        let sleep = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        let outcome = await sleep.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(clock.sleeps == [])
        #expect(clock.now == start)
    }
}
