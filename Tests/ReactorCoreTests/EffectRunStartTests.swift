import Synchronization
import Testing
@testable import ReactorCore

/// `EffectRunner.start` with a deadline service: a run's attempts share one task, an attempt
/// that times out hands the run on to a new task, and the run's handle reaches whichever task
/// runs now. Deadlines pass when the test fires them, so every order here is exact. Each test
/// runs twice: with tasks of the run's own, and with tasks reused from a pool
/// (`reusableTasks`), which must behave exactly alike.
@Suite struct EffectRunStartTests {
    /// Tasks of the run's own; tasks from a pool keeping up to 4.
    static let taskReuse = [0, 4]

    /// A run's outcomes (exactly one is expected), the attempts its handler began and what they emitted.
    final class Record: Sendable {
        private let state = Mutex<(outcomes: [EffectOutcome], attempts: Int, emits: [Int], placements: [Bool])>(([], 0, [], []))

        func ended(_ outcome: EffectOutcome) { state.withLock { $0.outcomes.append(outcome) } }
        func attempted() -> Int {
            state.withLock { state in
                state.attempts += 1
                return state.attempts
            }
        }
        func emitted(_ value: Int) { state.withLock { $0.emits.append(value) } }
        func placed(onProbe: Bool) { state.withLock { $0.placements.append(onProbe) } }
        var outcomes: [EffectOutcome] { state.withLock { $0.outcomes } }
        var attempts: Int { state.withLock { $0.attempts } }
        var emits: [Int] { state.withLock { $0.emits } }
        /// For each attempt, whether its task preferred the handler's `probe` executor.
        var placements: [Bool] { state.withLock { $0.placements } }
    }

    /// In the attempts listed in `hangIn` it waits until its task is cancelled (then throws);
    /// in the others it emits `effect * 10 + attempt` and returns. With a `probe`, each attempt
    /// first notes whether its task prefers that executor.
    struct Hanging: EffectHandler {
        let record: Record
        let hangIn: Set<Int>
        var probe: ForwardingExecutor?
        func run(_ effect: Int, emit: Emitter<Int>) async throws {
            if let probe {
                record.placed(onProbe: withUnsafeCurrentTask { $0?.unownedTaskExecutor } == probe.asUnownedTaskExecutor())
            }
            let attempt = record.attempted()
            if hangIn.contains(attempt) {
                try await Task.sleep(for: .seconds(600))
            }
            await emit(effect * 10 + attempt)
        }
    }

    private static let retrying = RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), timeout: .seconds(30))

    private func start(_ record: Record, hangIn: Set<Int> = [], policy: RetryPolicy = Self.retrying, deadlines: ManualDeadlines,
                       executor: ForwardingExecutor? = nil, probe: ForwardingExecutor? = nil, reusableTasks: Int,
                       prepare: @escaping @Sendable () throws(EffectFailure) -> Int = { 7 }) -> EffectRun {
        EffectRunner(handler: Hanging(record: record, hangIn: hangIn, probe: probe), policy: policy, deadlines: deadlines, executor: executor,
                     reusableTasks: reusableTasks)
            .start(preparing: prepare, sink: { _, value in record.emitted(value) }, completion: record.ended)
    }

    @Test(arguments: EffectRunStartTests.taskReuse) func aQuickRunEndsOnceWithItsEmitsAndLeavesNoDeadline(reusableTasks: Int) async {
        let deadlines = ManualDeadlines()
        let record = Record()
        _ = start(record, deadlines: deadlines, reusableTasks: reusableTasks)
        #expect(await eventually { !record.outcomes.isEmpty })
        #expect(record.outcomes == [.done(emitCount: 1)])
        #expect(record.emits == [71])
        #expect(deadlines.pendingCount == 0)
    }

    @Test(arguments: EffectRunStartTests.taskReuse) func anAttemptThatTimesOutIsFollowedInANewTaskThatSucceeds(reusableTasks: Int) async {
        let deadlines = ManualDeadlines()
        let record = Record()
        _ = start(record, hangIn: [1], deadlines: deadlines, reusableTasks: reusableTasks)
        #expect(await eventually { record.attempts == 1 && deadlines.pendingCount == 1 })
        deadlines.fireAll()
        #expect(await eventually { !record.outcomes.isEmpty })
        // The second attempt's task was not cancelled: it emitted and returned.
        #expect(record.outcomes == [.done(emitCount: 1)])
        #expect(record.attempts == 2)
        #expect(record.emits == [72])
        #expect(deadlines.pendingCount == 0)
    }

    @Test(arguments: EffectRunStartTests.taskReuse) func theLastAttemptTimingOutFailsTheRunWithTheTimeout(reusableTasks: Int) async {
        let deadlines = ManualDeadlines()
        let record = Record()
        let policy = RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1), timeout: .milliseconds(250))
        _ = start(record, hangIn: [1, 2], policy: policy, deadlines: deadlines, reusableTasks: reusableTasks)
        for attempt in 1...2 {
            #expect(await eventually { record.attempts == attempt && deadlines.pendingCount == 1 })
            deadlines.fireAll()
        }
        #expect(await eventually { !record.outcomes.isEmpty })
        #expect(record.outcomes == [.failed(EffectFailure(message: "timed out after 0.25 seconds", attempts: 2))])
        #expect(record.emits == [])
    }

    @Test(arguments: EffectRunStartTests.taskReuse) func cancellingReachesTheAttemptThatRunsInTheNewTask(reusableTasks: Int) async {
        let deadlines = ManualDeadlines()
        let record = Record()
        let run = start(record, hangIn: [1, 2], deadlines: deadlines, reusableTasks: reusableTasks)
        #expect(await eventually { record.attempts == 1 && deadlines.pendingCount == 1 })
        deadlines.fireAll()
        #expect(await eventually { record.attempts == 2 && deadlines.pendingCount == 1 })
        run.cancel()
        #expect(await eventually { !record.outcomes.isEmpty })
        #expect(record.outcomes == [.failed(EffectFailure(message: "cancelled", attempts: 2))])
        #expect(record.attempts == 2)
        #expect(deadlines.pendingCount == 0)
    }

    @Test(arguments: EffectRunStartTests.taskReuse) func cancellingDuringTheBackoffStartsNoFurtherAttempt(reusableTasks: Int) async {
        let deadlines = ManualDeadlines()
        let record = Record()
        let policy = RetryPolicy(maxAttempts: 3, initialBackoff: .seconds(600), timeout: .seconds(30))
        let run = start(record, hangIn: [1], policy: policy, deadlines: deadlines, reusableTasks: reusableTasks)
        #expect(await eventually { record.attempts == 1 && deadlines.pendingCount == 1 })
        deadlines.fireAll()
        // The new task sleeps out the 600 s backoff before attempt 2; cancelling ends the run.
        #expect(await eventually { deadlines.pendingCount == 0 })
        run.cancel()
        #expect(await eventually { !record.outcomes.isEmpty })
        #expect(record.outcomes == [.failed(EffectFailure(message: "cancelled", attempts: 1))])
        #expect(record.attempts == 1)
    }

    @Test(arguments: EffectRunStartTests.taskReuse) func aPreparationThatFailsEndsTheRunWithoutAnAttempt(reusableTasks: Int) async {
        let deadlines = ManualDeadlines()
        let record = Record()
        let refused = EffectFailure(message: "does not decode", attempts: 0)
        _ = start(record, deadlines: deadlines, reusableTasks: reusableTasks, prepare: { () throws(EffectFailure) in throw refused })
        #expect(await eventually { !record.outcomes.isEmpty })
        #expect(record.outcomes == [.failed(refused)])
        #expect(record.attempts == 0)
        #expect(deadlines.pendingCount == 0)
    }

    @Test func runWithDeadlinesGoesThroughTheRunsTasksAndForwardsCancellation() async {
        let deadlines = ManualDeadlines()
        let record = Record()
        let runner = EffectRunner(handler: Hanging(record: record, hangIn: [1, 2]), policy: Self.retrying, deadlines: deadlines)
        let job = Task { await runner.run(7) { _, value in record.emitted(value) } }
        #expect(await eventually { record.attempts == 1 && deadlines.pendingCount == 1 })
        deadlines.fireAll()
        #expect(await eventually { record.attempts == 2 && deadlines.pendingCount == 1 })
        job.cancel()
        #expect(await job.value == .failed(EffectFailure(message: "cancelled", attempts: 2)))
        #expect(deadlines.pendingCount == 0)
    }

    @Test(arguments: EffectRunStartTests.taskReuse) func aTimeoutThatArrivesLateLeavesTheNextTaskAlone(reusableTasks: Int) async {
        let run = EffectRun(pool: reusableTasks > 0 ? EffectTaskPool(executor: nil, idleLimit: reusableTasks) : nil)
        let first = Mutex<Bool?>(nil), second = Mutex<Bool?>(nil)
        #expect(run.launch { _ in first.withLock { $0 = Task.isCancelled } })
        #expect(await eventually { first.withLock { $0 } != nil })
        // The second task waits for the test's signal before it looks at its cancellation.
        let (release, signal) = AsyncStream<Void>.makeStream()
        #expect(run.launch { _ in
            for await _ in release { break }
            second.withLock { $0 = Task.isCancelled }
        })
        // The first task's timeout, arriving after the run moved on to its second task.
        run.interrupt(generation: 1)
        signal.yield()
        signal.finish()
        #expect(await eventually { second.withLock { $0 } != nil })
        #expect(second.withLock { $0 } == false)
        run.cancel()
        #expect(run.launch { _ in } == false)
    }

    /// Runs every job on the global concurrent executor, counting them.
    final class ForwardingExecutor: TaskExecutor {
        let enqueued = Atomic<Int>(0)
        func enqueue(_ job: consuming ExecutorJob) {
            enqueued.add(1, ordering: .relaxed)
            globalConcurrentExecutor.enqueue(job)
        }
    }

    @Test(arguments: EffectRunStartTests.taskReuse) func everyTaskOfARunPrefersTheRunnersExecutorAlsoAfterATimeout(reusableTasks: Int) async {
        let deadlines = ManualDeadlines()
        let record = Record()
        let executor = ForwardingExecutor()
        _ = start(record, hangIn: [1], deadlines: deadlines, executor: executor, probe: executor, reusableTasks: reusableTasks)
        #expect(await eventually { record.placements.count == 1 && deadlines.pendingCount == 1 })
        deadlines.fireAll()
        #expect(await eventually { !record.outcomes.isEmpty })
        #expect(record.outcomes == [.done(emitCount: 1)])
        // The first attempt's task and the one that followed its timeout both ran there.
        #expect(record.placements == [true, true])
        #expect(executor.enqueued.load(ordering: .relaxed) >= 2)
    }

    @Test(arguments: EffectRunStartTests.taskReuse) func withoutAnExecutorARunsTasksPreferNone(reusableTasks: Int) async {
        let deadlines = ManualDeadlines()
        let record = Record()
        let executor = ForwardingExecutor()
        _ = start(record, deadlines: deadlines, probe: executor, reusableTasks: reusableTasks)
        #expect(await eventually { !record.outcomes.isEmpty })
        #expect(record.placements == [false])
        #expect(executor.enqueued.load(ordering: .relaxed) == 0)
    }
}
