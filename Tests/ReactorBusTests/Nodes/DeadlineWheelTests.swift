@testable import ReactorBus
import ReactorCore
import Synchronization
import Testing
import TestSupport

@Suite struct DeadlineWheelTests {
    /// What fired, in firing order, and when.
    final class Log: Sendable {
        private let entries = Mutex<[(label: Int, at: ContinuousClock.Instant)]>([])

        func record(_ label: Int) { entries.withLock { $0.append((label, .now)) } }
        var labels: [Int] { entries.withLock { $0.map(\.label) } }
        var count: Int { entries.withLock { $0.count } }
        func firedAt(_ label: Int) -> ContinuousClock.Instant? { entries.withLock { $0.first { $0.label == label }?.at } }
        /// When each label fired (the first time).
        var firings: [Int: ContinuousClock.Instant] {
            entries.withLock { Dictionary($0.map { ($0.label, $0.at) }, uniquingKeysWith: { first, _ in first }) }
        }
    }

    @Test func aDeadlineFiresOnceAndNeverBeforeItsTime() async throws {
        let wheel = DeadlineWheel()
        let log = Log()
        let deadline = ContinuousClock.now + .milliseconds(30)
        _ = wheel.schedule(at: deadline) { log.record(1) }
        #expect(wheel.pendingCount == 1)
        #expect(await eventually { log.count == 1 })
        #expect(try #require(log.firedAt(1)) >= deadline)
        #expect(wheel.pendingCount == 0)
    }

    @Test func deadlinesFireInDeadlineOrderThenSchedulingOrder() async {
        let wheel = DeadlineWheel()
        let log = Log()
        let base = ContinuousClock.now + .milliseconds(20)
        for (label, offset) in [(5, 50), (1, 10), (3, 30), (2, 20), (4, 40), (6, 50)] {
            _ = wheel.schedule(at: base + .milliseconds(offset)) { log.record(label) }
        }
        #expect(await eventually { log.count == 6 })
        #expect(log.labels == [1, 2, 3, 4, 5, 6])
    }

    @Test func aCancelledDeadlineNeverFires() async {
        let wheel = DeadlineWheel()
        let log = Log()
        let now = ContinuousClock.now
        let cancelled = wheel.schedule(at: now + .milliseconds(200)) { log.record(1) }
        // Only a cancel that comes after the deadline began (200 ms late) may say it came late.
        let stopped = wheel.cancel(cancelled)
        #expect(wheel.pendingCount == 0)
        // A later deadline: once it fired, the cancelled one would have fired before it.
        _ = wheel.schedule(at: now + .milliseconds(230)) { log.record(2) }
        #expect(await eventually { log.count >= 1 && log.labels.last == 2 })
        #expect(log.labels == (stopped ? [2] : [1, 2]))
        #expect(wheel.pendingCount == 0)
    }

    @Test func cancellingAfterTheFiringOrTwiceChangesNothing() async {
        let wheel = DeadlineWheel()
        let log = Log()
        let token = wheel.schedule(after: .zero) { log.record(1) }
        #expect(await eventually { log.count == 1 })
        let later = wheel.schedule(after: .milliseconds(20)) { log.record(2) }
        #expect(!wheel.cancel(token))
        #expect(!wheel.cancel(token))
        #expect(!wheel.cancel(EffectDeadlineToken(id: later.id, slot: -1)))
        #expect(wheel.pendingCount == 1)
        #expect(await eventually { log.count == 2 })
        #expect(!wheel.cancel(later))
        #expect(log.labels == [1, 2])
        #expect(wheel.pendingCount == 0)
    }

    @Test func manyDeadlinesOverSeveralTurnsEachFireOnceInOrder() async {
        // 16 slots of 5 ms: a turn is 80 ms, and the deadlines spread over about 6 turns.
        let wheel = DeadlineWheel(tick: .milliseconds(5), slotCount: 16)
        let log = Log()
        let base = ContinuousClock.now + .milliseconds(50)
        let deadlines = (0..<10_000).map { base + .microseconds(($0 * 7_919) % 500_000) }
        // When each was scheduled: one scheduled after its deadline (the test's task was held up
        // on a loaded machine) fires at once, so it has no place in the order below.
        var scheduledAt: [ContinuousClock.Instant] = []
        scheduledAt.reserveCapacity(deadlines.count)
        for (label, deadline) in deadlines.enumerated() {
            _ = wheel.schedule(at: deadline) { log.record(label) }
            scheduledAt.append(.now)
        }
        #expect(await eventually { log.count == 10_000 })
        #expect(wheel.pendingCount == 0)
        #expect(Set(log.labels).count == 10_000)
        let firings = log.firings
        let early = deadlines.indices.filter { label in firings[label].map { $0 < deadlines[label] } ?? true }
        #expect(early.isEmpty)
        // Fired in deadline order, to the wheel's resolution (every one scheduled a tick ahead).
        let fired = log.labels.filter { scheduledAt[$0] < deadlines[$0] - .milliseconds(5) }.map { deadlines[$0] }
        #expect(zip(fired, fired.dropFirst()).allSatisfy { $0 <= $1 + .milliseconds(5) })
    }

    @Test func manyTasksScheduleAndCancelAtOnce() async {
        let wheel = DeadlineWheel()
        let log = Log()
        // A cancel that comes after its deadline began (a task descheduled for milliseconds
        // between scheduling and cancelling, on a loaded machine) says so, and only then it fires.
        let late = await withTaskGroup(of: [Int].self) { group in
            for task in 0..<100 {
                group.addTask {
                    var late: [Int] = []
                    for index in 0..<100 {
                        let label = task * 100 + index
                        let token = wheel.schedule(after: .milliseconds(index % 7)) { log.record(label) }
                        if index.isMultiple(of: 2), !wheel.cancel(token) { late.append(label) }
                    }
                    return late
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(await eventually { log.count >= 5_000 + late.count })
        #expect(wheel.pendingCount == 0)
        // A marker after every other deadline: cancelled ones would have fired before it.
        _ = wheel.schedule(after: .milliseconds(20)) { log.record(-1) }
        #expect(await eventually { log.labels.last == -1 })
        let labels = log.labels.dropLast()
        #expect(labels.count == 5_000 + late.count)
        #expect(Set(labels) == Set((0..<10_000).filter { !$0.isMultiple(of: 2) }).union(late))
    }

    @Test func tenThousandQuickAttemptsLeaveNoPendingDeadline() async {
        struct Quick: EffectHandler {
            func run(_ effect: Int, emit: Emitter<Int>) async throws { await emit(effect) }
        }
        let wheel = DeadlineWheel()
        let runner = EffectRunner(handler: Quick(), policy: RetryPolicy(timeout: .seconds(30)), deadlines: wheel)
        let done = await withTaskGroup(of: EffectOutcome.self, returning: Int.self) { group in
            for effect in 0..<10_000 {
                group.addTask { await runner.run(effect) { _, _ in } }
            }
            var done = 0
            for await outcome in group where outcome == .done(emitCount: 1) { done += 1 }
            return done
        }
        #expect(done == 10_000)
        #expect(wheel.pendingCount == 0)
    }

    struct Sleeper: EffectHandler {
        let duration: Duration
        func run(_ effect: Int, emit: Emitter<Int>) async throws {
            await emit(effect)
            try await Task.sleep(for: duration)
            await emit(effect + 1)
        }
    }

    @Test func anAttemptPastItsDeadlineTimesOutAndIsRetried() async {
        let wheel = DeadlineWheel()
        let policy = RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1), timeout: .milliseconds(20))
        let emits = Log()
        let start = ContinuousClock.now
        let outcome = await EffectRunner(handler: Sleeper(duration: .seconds(60)), policy: policy, deadlines: wheel)
            .run(1) { index, value in emits.record(Int(index) * 1_000 + value) }
        #expect(ContinuousClock.now - start >= .milliseconds(40))
        #expect(outcome == .failed(EffectFailure(message: "timed out after 0.02 seconds", attempts: 2)))
        // Each attempt emitted its first mutation as index 0, and never its second.
        #expect(emits.labels == [1, 1])
        #expect(wheel.pendingCount == 0)
    }

    @Test func aDeadlineTooFarToCountInNanosecondsNeverFires() async {
        let wheel = DeadlineWheel()
        let log = Log()
        let far = wheel.schedule(after: .seconds(Int64.max)) { log.record(1) }
        // A deadline due now fires on the wheel's next tick; the far one, scheduled first, not.
        _ = wheel.schedule(after: .zero) { log.record(2) }
        #expect(await eventually { log.count == 1 })
        #expect(log.labels == [2])
        #expect(wheel.pendingCount == 1)
        #expect(wheel.cancel(far))
        #expect(wheel.pendingCount == 0)
    }

    @Test func aCancelledJobReportsCancelledAndLeavesNoDeadline() async {
        let wheel = DeadlineWheel()
        let runner = EffectRunner(handler: Sleeper(duration: .seconds(60)), policy: RetryPolicy(timeout: .seconds(30)), deadlines: wheel)
        let job = Task { await runner.run(1) { _, _ in } }
        #expect(await eventually { wheel.pendingCount == 1 })
        job.cancel()
        #expect(await job.value == .failed(EffectFailure(message: "cancelled", attempts: 1)))
        #expect(wheel.pendingCount == 0)
    }

    @Test func aHandlerThatFailsFastIsRetriedWithItsOwnError() async {
        struct Failing: EffectHandler {
            struct Refused: Error, CustomStringConvertible { var description: String { "refused" } }
            func run(_ effect: Int, emit: Emitter<Int>) async throws { throw Refused() }
        }
        let wheel = DeadlineWheel()
        let policy = RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), timeout: .seconds(30))
        let outcome = await EffectRunner(handler: Failing(), policy: policy, deadlines: wheel).run(1) { _, _ in }
        #expect(outcome == .failed(EffectFailure(message: "refused", attempts: 3)))
        #expect(wheel.pendingCount == 0)
    }
}
