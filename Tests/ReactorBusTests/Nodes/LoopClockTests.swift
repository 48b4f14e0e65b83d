import Foundation
@testable import ReactorBus
import ReactorCore
import Synchronization
import Testing
import ZeroMQ
import TestSupport

/// The worker's effect clock, driven the way the worker's loop drives it: a thread that polls
/// the clock's wake-up mailbox with the earliest deadline as its only timeout (no cap, so a lost
/// wake-up would leave a sleep hanging and fail the test), resumes what is due and runs the
/// slices of the tasks that prefer its executor, in order.
@Suite struct LoopClockTests {
    /// The loop side of a ``LoopClock`` on a thread of its own, until ``stop()``.
    final class Driver: Sendable {
        let clock: LoopClock
        let executor: LoopEffectExecutor
        private let wakeup: Mailbox<Void>
        private let stopped = Atomic(false)
        /// While set, the loop runs slices but resumes no sleep (and does not wait for one).
        private let holding: Atomic<Bool>

        init(holding: Bool = false, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) throws {
            self.holding = Atomic(holding)
            clock = try LoopClock(now: now)
            executor = try LoopEffectExecutor()
            wakeup = try Mailbox<Void>()
            Thread.detachNewThread { [self] in loop() }
        }

        private func loop() {
            let poller = NodePoller(wakeup: wakeup)
            let clockItem = poller.register(clock.wake)
            let slicesItem = poller.register(executor.slices)
            var slices: [UnownedJob] = []
            while !stopped.load(ordering: .acquiring) {
                let held = holding.load(ordering: .acquiring)
                try? poller.wait(until: .max, longest: .max, orUntilNanosecond: held ? .max : clock.nextWake())
                if poller.isReadable(clockItem) { _ = clock.wake.drain() }
                executor.slices.drain(into: &slices, afterRunning: { if !held { clock.resumeDue() } },
                                      clearing: poller.isReadable(slicesItem))
                _ = executor.run(slices)
            }
            executor.moveToPool()
            clock.close()
        }

        /// Lets the loop resume sleeps from now on.
        func release() {
            holding.store(false, ordering: .releasing)
            wakeup.post(())
        }

        /// Ends the thread (which closes the clock), without blocking the caller's thread: a
        /// test's task must not hold one of the few threads of Swift's pool.
        func stop() {
            stopped.store(true, ordering: .releasing)
            wakeup.post(())
        }
    }

    /// A time that stands still until the test moves it, so that no deadline passes while a
    /// slow machine gets round to the next step.
    final class StillTime: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(by duration: Duration) { instant.withLock { $0 += duration } }
    }

    /// What the sleeping tasks recorded, in the order their code ran.
    final class Log: Sendable {
        private let entries = Mutex<[(label: Int, at: ContinuousClock.Instant)]>([])
        func record(_ label: Int) { entries.withLock { $0.append((label, .now)) } }
        var labels: [Int] { entries.withLock { $0.map(\.label) } }
        func at(_ label: Int) -> ContinuousClock.Instant? { entries.withLock { $0.first { $0.label == label }?.at } }
    }

    @Test func aSleepFromAnotherThreadWakesTheWaitingLoopAndNeverEndsEarly() async throws {
        let driver = try Driver()
        defer { driver.stop() }
        // The loop waits with no deadline at all: only the sleep's wake-up can end its poll.
        #expect(try await Self.sleepEnds(on: driver.clock, after: .milliseconds(30)))
        #expect(driver.clock.sleeping == 0 && driver.clock.entries == 0)
    }

    @Test func sleepsEndInDeadlineOrderThenInTheOrderTheyBegan() async throws {
        // Nothing is due, and the loop resumes nothing, until every sleep has begun.
        let time = StillTime()
        let driver = try Driver(holding: true, now: { time.now })
        defer { driver.stop() }
        let log = Log()
        let base = time.now
        let plan = [(5, 50), (1, 10), (3, 30), (2, 20), (4, 40), (6, 50)]
        var tasks: [Task<Void, any Error>] = []
        for (label, offset) in plan {
            let deadline = base + .milliseconds(offset)
            tasks.append(Task(executorPreference: driver.executor) { [clock = driver.clock] in
                try await clock.sleep(until: deadline)
                log.record(label)
            })
            // Each sleep is in the heap before the next begins (label 6 after label 5).
            #expect(await eventually { driver.clock.sleeping == tasks.count })
        }
        defer { for task in tasks { task.cancel() } }
        #expect(log.labels.isEmpty)
        time.advance(by: .milliseconds(49))
        driver.release()
        // Due: the four deadlines up to 40 ms; the two at 50 ms wait for the time to move on.
        #expect(await eventually { log.labels.count == 4 })
        #expect(driver.clock.sleeping == 2)
        time.advance(by: .milliseconds(1))
        driver.clock.wake.post(())
        #expect(await eventually { log.labels.count == 6 })
        #expect(log.labels == [1, 2, 3, 4, 5, 6])
    }

    @Test func cancellingASleepEndsItAtOnceWithCancellationError() async throws {
        let driver = try Driver()
        defer { driver.stop() }
        let sleep = Task { [clock = driver.clock] in try await clock.sleep(for: .seconds(60)) }
        #expect(await eventually { driver.clock.sleeping == 1 })
        sleep.cancel()
        let outcome = await sleep.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(driver.clock.sleeping == 0)
    }

    @Test func aTaskCancelledBeforeItSleepsThrowsWithoutWaiting() async throws {
        let driver = try Driver()
        defer { driver.stop() }
        let sleep = Task { [clock = driver.clock] in
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        let outcome = await sleep.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(driver.clock.entries == 0)
    }

    @Test func sleepsLeftWhenTheLoopEndsAndLaterOnesWaitOnTheSystemClock() async throws {
        // No loop, and a time that stands still: only the clock's close can end this sleep.
        let time = StillTime()
        let clock = try LoopClock(now: { time.now })
        let start = time.now
        let sleep = Task { try await clock.sleep(until: start + .milliseconds(80)) }
        defer { sleep.cancel() }
        #expect(await eventually { clock.sleeping == 1 })
        clock.close()
        #expect(clock.entries == 0)
        let outcome = await sleep.result
        #expect(throws: Never.self) { try outcome.get() }
        #expect(ContinuousClock.now - start >= .milliseconds(80))
        let later = ContinuousClock.now
        try await clock.sleep(until: later + .milliseconds(20))
        #expect(ContinuousClock.now - later >= .milliseconds(20))
    }

    @Test func aSleepTooFarToCountInNanosecondsLetsTheLoopWaitWithoutEnd() async throws {
        // No loop: the test reads what the loop would wait for.
        let clock = try LoopClock()
        let far = Task { try await clock.sleep(for: .seconds(1_000_000_000_000)) }
        defer { far.cancel() }
        #expect(await eventually { clock.sleeping == 1 })
        // 10^21 ns does not fit: the deadline is "never", not a moment in the past.
        #expect(clock.nextWake() == .max)
        let near = Task { try await clock.sleep(for: .seconds(3_600)) }
        defer { near.cancel() }
        #expect(await eventually { clock.sleeping == 2 })
        let wake = clock.nextWake()
        #expect(wake > MonotonicClock.nanoseconds() + 3_500 * 1_000_000_000 && wake < .max)
        clock.close()
    }

    @Test func cancelledSleepsDoNotPileUpInTheHeap() async throws {
        let driver = try Driver()
        defer { driver.stop() }
        // 3,000 sleeps of a minute, each cancelled: their entries go, though no deadline passed.
        for round in 0..<3 {
            let sleeps = (0..<1_000).map { _ in Task { [clock = driver.clock] in try await clock.sleep(for: .seconds(60)) } }
            #expect(await eventually { driver.clock.sleeping == 1_000 }, "round \(round)")
            for sleep in sleeps { sleep.cancel() }
            for sleep in sleeps {
                let outcome = await sleep.result
                #expect(throws: CancellationError.self) { try outcome.get() }
            }
        }
        #expect(driver.clock.sleeping == 0)
        #expect(driver.clock.entries <= 2_048)
        // One more sleep still ends, at its time.
        #expect(try await Self.sleepEnds(on: driver.clock, after: .milliseconds(10)))
    }

    /// Sleeps `duration` on `clock` in a task of its own; whether it ended within the bound of
    /// `eventually` (so a lost wake-up fails instead of hanging) and no earlier than asked.
    static func sleepEnds(on clock: LoopClock, after duration: Duration) async throws -> Bool {
        let log = Log()
        let start = ContinuousClock.now
        let sleep = Task {
            try await clock.sleep(for: duration)
            log.record(1)
        }
        defer { sleep.cancel() }
        guard await eventually({ log.labels == [1] }) else { return false }
        return try #require(log.at(1)) - start >= duration
    }
}
