import ReactorCore
import Synchronization
import ZeroMQ

/// The clock a worker's effects and subscriptions wait on (``EffectClock/current`` in their
/// tasks): a sleep is an entry in a heap (``SleepQueue``), and the worker's loop wakes it in the
/// first turn after its deadline, on the loop's own thread.
///
/// Why: `Task.sleep` on Linux arms a Dispatch timer per call; it fires on a Dispatch thread,
/// which hands the task back to the loop's executor and wakes the loop. In the bench's effects
/// phase (effects that wait 10 ms) those threads took more CPU than the worker's loop itself.
/// Here the loop polls with the earliest deadline as its timeout and resumes what is due while
/// it drains its effect slices, so the woken tasks run in the same turn, and no other thread
/// takes part.
///
/// Precision: a sleep never ends before its deadline (`ContinuousClock` instants, read by the
/// loop before it resumes a sleeper), and ends in the loop's first turn after it: the loop's
/// poll waits to the nanosecond (`ppoll`), so that is the system's timer slack (50 µs by
/// default) plus whatever the turn before had to do.
/// Cancelling the sleeping task ends the sleep at once with `CancellationError`. Once the
/// loop has ended (``close()``), sleeps that remain or begin wait on a `ContinuousClock`.
///
/// Threads: any thread may sleep on the clock (effects moved to the shared pool do); a sleep
/// that becomes the earliest while the loop waits wakes it through ``wake``. ``nextWake()``,
/// ``resumeDue()`` and ``close()`` are the loop's, on its thread.
final class LoopClock: Clock {
    typealias Instant = ContinuousClock.Instant
    typealias Duration = Swift.Duration

    /// Posted when a sleep must end before the deadline the loop waits for; the loop polls it.
    let wake: Mailbox<Void>
    private let sleeps = SleepQueue()
    /// The loop is between ``nextWake()`` and ``resumeDue()``: a sleep that becomes the earliest
    /// must wake it.
    private let loopWaits = Atomic(false)
    /// Reads the time: `ContinuousClock`'s, or a test's.
    private let reading: @Sendable () -> Instant

    /// Creates the clock and its wake-up mailbox.
    /// - Parameter now: where the time is read; a test may hold it still or move it on.
    /// - Throws: ``ZMQError`` when the mailbox's descriptors cannot be made.
    init(now: @escaping @Sendable () -> Instant = { ContinuousClock.now }) throws(ZMQError) {
        wake = try Mailbox<Void>.forNode()
        reading = now
    }

    var now: Instant { reading() }
    /// The system's default timer slack: the loop's poll may wake that much after a deadline.
    var minimumResolution: Duration { .microseconds(50) }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let woken = try await sleeps.wait(until: deadline, now: now) { isEarliest in
            // One post is enough: the loop reads the earliest deadline again before it waits.
            // (The loop sets the flag before it reads the heap, this sleep entered the heap
            // before it reads the flag: one of the two sees the other.)
            if isEarliest, loopWaits.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged {
                wake.post(())
            }
        }
        // The loop ended before the deadline: the rest of the wait is the system clock's.
        if !woken { try await ContinuousClock().sleep(until: deadline, tolerance: tolerance) }
    }

    /// Sleeps waiting now (for tests).
    var sleeping: Int { sleeps.sleeping }
    /// Entries in the heap, cancelled sleeps not dropped yet included (for tests).
    var entries: Int { sleeps.entries }

    // MARK: The loop's side

    /// The ``MonotonicClock`` nanosecond by which the earliest sleep's deadline has passed
    /// (`.max` when nothing sleeps): the latest the loop's poll may wait. From this call until
    /// ``resumeDue()``, a sleep that begins with an earlier deadline posts to ``wake``. Call it
    /// right before the poll.
    func nextWake() -> UInt64 {
        loopWaits.store(true, ordering: .sequentiallyConsistent)
        guard let deadline = sleeps.earliest() else { return .max }
        let remaining = deadline - now
        guard remaining > .zero else { return 0 }
        // Not rounded to a coarser step to wake for several sleeps at once: waking a whole
        // millisecond late (as a poll in milliseconds did) saved a little CPU per job at 1,000
        // effects of 10 ms in flight, and cost 100 of them 0.03x-0.05x of their ideal rate.
        return MonotonicClock.nanoseconds().saturatingAdd(remaining.wholeNanoseconds).saturatingAdd(1)
    }

    /// Resumes every sleep whose deadline has passed, earliest first (then in the order they
    /// began). Call it once in every turn after the poll.
    func resumeDue() {
        loopWaits.store(false, ordering: .sequentiallyConsistent)
        sleeps.resume(dueBy: reading)
    }

    /// The loop has ended: sleeps that remain, and those that begin later, wait on a
    /// `ContinuousClock` for the rest of their time.
    func close() {
        sleeps.close()
    }
}
