/// The clock an effect (or a subscription) waits on: `try await EffectClock.sleep(for: .milliseconds(300))`
/// for a debounce, a poll interval, a pause between calls.
///
/// Why not `Task.sleep`: the runtime that runs the effect knows a cheaper way to wait. A worker
/// node wakes its sleeping effects from its own loop, in the turn their deadline passes; on
/// Linux every `Task.sleep` arms a Dispatch timer whose thread then hands the task back, which
/// in the bench's 10 ms effects cost a worker more CPU than running the effects. And a test
/// can put its own clock here (`EffectClock.$current.withValue(clock) { ... }`) to decide when
/// time passes.
///
/// ``current`` is a task-local value: an ``EffectRunner`` made with a `clock` binds it for the
/// runs it starts (and their child tasks); anywhere else it is a `ContinuousClock`. A task
/// made with `Task.detached` inside an effect does not see the runtime's clock.
public enum EffectClock {
    /// The clock of the effect running in this task: its runtime's, or a `ContinuousClock` when
    /// none was given.
    @TaskLocal public static var current: any Clock<Duration> = ContinuousClock()

    /// Waits `duration` on ``current``; throws `CancellationError` when the task is cancelled
    /// first, as `Task.sleep` does.
    public static func sleep(for duration: Duration) async throws {
        try await current.sleep(for: duration)
    }

    /// Runs `operation` with `clock` as ``current``, or with ``current`` as it is when `clock`
    /// is `nil`: how a runtime given an optional clock binds it for the work it runs.
    package static func binding<T>(
        _ clock: (any Clock<Duration>)?, isolation: isolated (any Actor)? = #isolation, _ operation: () async throws -> T
    ) async rethrows -> T {
        guard let clock else { return try await operation() }
        return try await $current.withValue(clock, operation: operation)
    }
}
