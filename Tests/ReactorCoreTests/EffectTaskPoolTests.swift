import Synchronization
import Testing
@testable import ReactorCore

/// Runs that reuse tasks (`reusableTasks`): a finished run's task takes the next run's work, a
/// burst of runs that do not suspend is run by one task in a row, runs that suspend get a task
/// each, a run's cancellation reaches only its own work, and a cancelled task is never reused.
@Suite struct EffectTaskPoolTests {
    /// Effects that wait, when `holds` says so, until the test opens the gate (or their task is
    /// cancelled); each records whether its task was cancelled when it went on, and emits its
    /// own number.
    final class Gated: EffectHandler, Sendable {
        private let state = Mutex<(entered: [Int], sawCancelled: [Int: Bool])>(([], [:]))
        /// One gate per held effect: opening it ends the stream its run waits on.
        private let gates: [Int: (wait: AsyncStream<Void>, open: AsyncStream<Void>.Continuation)]

        init(holding holds: Set<Int> = []) {
            gates = Dictionary(uniqueKeysWithValues: holds.map { effect in
                let (wait, open) = AsyncStream<Void>.makeStream()
                return (effect, (wait, open))
            })
        }

        func open(_ effect: Int) { gates[effect]?.open.finish() }
        func sawCancelled(_ effect: Int) -> Bool? { state.withLock { $0.sawCancelled[effect] } }
        func entered(_ effect: Int) -> Bool { state.withLock { $0.entered.contains(effect) } }
        /// The effects in the order their runs began.
        var order: [Int] { state.withLock { $0.entered } }

        func run(_ effect: Int, emit: Emitter<Int>) async throws {
            state.withLock { $0.entered.append(effect) }
            if let gate = gates[effect] {
                // Ends when the gate opens, or at once when the task is cancelled.
                for await _ in gate.wait {}
                try Task.checkCancellation()
            }
            state.withLock { $0.sawCancelled[effect] = Task.isCancelled }
            await emit(effect)
        }
    }

    /// Every run's outcome, by effect.
    final class Outcomes: Sendable {
        private let state = Mutex<[Int: [EffectOutcome]]>([:])
        func ended(_ effect: Int, _ outcome: EffectOutcome) { state.withLock { $0[effect, default: []].append(outcome) } }
        func of(_ effect: Int) -> [EffectOutcome] { state.withLock { $0[effect] ?? [] } }
    }

    private func start(_ effect: Int, on runner: EffectRunner<Gated>, _ outcomes: Outcomes) -> EffectRun {
        runner.start(preparing: { effect }, sink: { _, _ in }, completion: { outcomes.ended(effect, $0) })
    }

    private func runner(_ handler: Gated, reusableTasks: Int = 4, executor: (any TaskExecutor)? = nil) -> EffectRunner<Gated> {
        EffectRunner(handler: handler, policy: .once, executor: executor, reusableTasks: reusableTasks)
    }

    /// A runner reusing tasks over a `Gated` handler holding `holds`, with its pool and a record
    /// of outcomes.
    private func fixture(holding holds: Set<Int> = [], reusableTasks: Int = 4, executor: (any TaskExecutor)? = nil) throws
        -> (outcomes: Outcomes, handler: Gated, runner: EffectRunner<Gated>, pool: EffectTaskPool) {
        let handler = Gated(holding: holds)
        let runner = runner(handler, reusableTasks: reusableTasks, executor: executor)
        return (Outcomes(), handler, runner, try #require(runner.pool))
    }

    @Test func runsOneAfterAnotherShareOneTask() async throws {
        let (outcomes, _, runner, pool) = try fixture()
        for effect in 1 ... 3 {
            _ = start(effect, on: runner, outcomes)
            #expect(await eventually { outcomes.of(effect) == [.done(emitCount: 1)] && pool.idleCount == 1 })
        }
        #expect(pool.tasksStarted == 1)
    }

    @Test func aFinishedRunsLateCancelLeavesTheNextRunOnItsTaskAlone() async throws {
        let (outcomes, handler, runner, pool) = try fixture(holding: [2])
        let first = start(1, on: runner, outcomes)
        #expect(await eventually { outcomes.of(1) == [.done(emitCount: 1)] && pool.idleCount == 1 })
        _ = start(2, on: runner, outcomes)
        #expect(await eventually { handler.entered(2) })
        #expect(pool.idleCount == 0)
        // The first run's handle still names the task that now runs the second run's work.
        first.cancel()
        handler.open(2)
        #expect(await eventually { !outcomes.of(2).isEmpty })
        #expect(outcomes.of(2) == [.done(emitCount: 1)])
        #expect(handler.sawCancelled(2) == false)
        #expect(outcomes.of(1) == [.done(emitCount: 1)])
        #expect(pool.tasksStarted == 1)
        #expect(await eventually { pool.idleCount == 1 })
    }

    @Test func aCancelledRunsTaskIsNeverReused() async throws {
        let (outcomes, handler, runner, pool) = try fixture(holding: [1])
        let first = start(1, on: runner, outcomes)
        #expect(await eventually { handler.entered(1) })
        first.cancel()
        #expect(await eventually { !outcomes.of(1).isEmpty })
        #expect(outcomes.of(1) == [.failed(EffectFailure(message: "cancelled", attempts: 1))])
        // The cancelled task ended instead of parking: the next run gets a new one, uncancelled.
        #expect(pool.idleCount == 0)
        _ = start(2, on: runner, outcomes)
        #expect(await eventually { !outcomes.of(2).isEmpty })
        #expect(outcomes.of(2) == [.done(emitCount: 1)])
        #expect(handler.sawCancelled(2) == false)
        #expect(pool.tasksStarted == 2)
    }

    @Test func noMoreThanTheLimitWaitForWork() async throws {
        let (outcomes, handler, runner, pool) = try fixture(holding: [1, 2, 3, 4], reusableTasks: 2)
        for effect in 1 ... 4 { _ = start(effect, on: runner, outcomes) }
        // Each held run leaves the queue to a task woken for it: four at once.
        #expect(await eventually { (1 ... 4).allSatisfy(handler.entered) })
        #expect(pool.tasksStarted == 4)
        for effect in 1 ... 4 { handler.open(effect) }
        #expect(await eventually { (1 ... 4).allSatisfy { outcomes.of($0) == [.done(emitCount: 1)] } })
        #expect(await eventually { pool.idleCount == 2 })
        // The two parked tasks take the next two runs.
        for effect in 5 ... 6 { _ = start(effect, on: runner, outcomes) }
        #expect(await eventually { (5 ... 6).allSatisfy { outcomes.of($0) == [.done(emitCount: 1)] } })
        #expect(pool.tasksStarted == 4)
    }

    @Test func retiringEndsTheWaitingTasksAndLaterRunsStillRun() async throws {
        let (outcomes, _, runner, pool) = try fixture()
        _ = start(1, on: runner, outcomes)
        #expect(await eventually { outcomes.of(1) == [.done(emitCount: 1)] && pool.idleCount == 1 })
        runner.retireIdleTasks()
        #expect(pool.idleCount == 0)
        for effect in 2 ... 3 {
            _ = start(effect, on: runner, outcomes)
            #expect(await eventually { outcomes.of(effect) == [.done(emitCount: 1)] })
        }
        // A task each, none kept.
        #expect(pool.tasksStarted == 3)
        #expect(pool.idleCount == 0)
    }

    @Test(arguments: [40, 100]) func aBurstOfRunsThatDoNotSuspendIsRunInARowByOneTask(runs: Int) async throws {
        let executor = HeldExecutor()
        defer { executor.stop() }
        let (outcomes, handler, runner, pool) = try fixture(executor: executor)
        // All queued before any task runs, as a worker starts a batch of jobs in one turn.
        for effect in 1 ... runs { _ = start(effect, on: runner, outcomes) }
        #expect(pool.tasksStarted == 1)
        executor.open()
        #expect(await eventually { (1 ... runs).allSatisfy { outcomes.of($0) == [.done(emitCount: 1)] } && pool.idleCount == 2 })
        #expect(handler.order == Array(1 ... runs))
        // The first task runs up to the drain limit in a row, the one it woke for the rest
        // takes over (waking the first back if works still wait), and both park.
        #expect(pool.tasksStarted == 2)
        let switches = runs <= EffectTaskPool.drainLimit ? 2 : 3
        #expect(executor.ran == switches)
        #expect(handler.sawCancelled(runs) == false)
    }

    @Test func aRunCancelledWhileItsWorkWaitsEndsWithoutAnAttemptAndLeavesTheTaskAlone() async throws {
        let executor = HeldExecutor()
        defer { executor.stop() }
        let (outcomes, handler, runner, pool) = try fixture(executor: executor)
        _ = start(1, on: runner, outcomes)
        let second = start(2, on: runner, outcomes)
        _ = start(3, on: runner, outcomes)
        second.cancel()
        executor.open()
        #expect(await eventually { [1, 2, 3].allSatisfy { !outcomes.of($0).isEmpty } && pool.idleCount == 2 })
        #expect(outcomes.of(2) == [.failed(EffectFailure(message: "cancelled", attempts: 0))])
        #expect(handler.order == [1, 3])
        // The task that found the cancelled work went on with the next, uncancelled.
        #expect(outcomes.of(3) == [.done(emitCount: 1)])
        #expect(handler.sawCancelled(3) == false)
        #expect(pool.tasksStarted == 2)
    }

    /// Something a run's closures hold, to see when they are let go.
    final class Held: Sendable {}

    @Test func aParkedTaskHoldsNothingOfTheRunItRan() async throws {
        let (outcomes, _, runner, pool) = try fixture()
        weak var first: Held?
        weak var second: Held?
        // The first run's work is a new task's first; the second's is given to it while parked.
        for (effect, held) in [(1, Held()), (2, Held())] {
            if effect == 1 { first = held } else { second = held }
            _ = runner.start(preparing: { _ = held; return effect }, sink: { _, _ in },
                             completion: { outcomes.ended(effect, $0) })
            #expect(await eventually { outcomes.of(effect) == [.done(emitCount: 1)] && pool.idleCount == 1 })
        }
        #expect(pool.tasksStarted == 1)
        // Parked, the task keeps neither run's closures (nor what they captured).
        #expect(await eventually { first == nil && second == nil })
    }

    @Test func aRunnerThatDoesNotReuseTasksHasNoPool() {
        #expect(runner(Gated(), reusableTasks: 0).pool == nil)
    }
}
