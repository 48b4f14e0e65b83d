import Glibc
import ZeroMQ

/// The executor a worker's effect tasks prefer: their code runs on the worker's loop thread,
/// between reads of its socket, until the loop hands them to the shared pool for good.
///
/// Why: a job is a few microseconds of code (decode the effect, run it to its first
/// suspension or its end, encode its mutations) and on the shared pool every job crossed
/// threads twice, loop -> pool -> loop, each crossing a wake-up; on the loop thread a job
/// received in a turn is run, and its report sent, in the same turn. The async bench's workers
/// spent about a sixth less CPU per job (see README, Performance).
///
/// Slices wait in a ``Mailbox`` (any thread may resume a task: a timer, another task) until the
/// loop takes them and calls ``run(_:)``. ``moveToPool()`` closes the mailbox: what waits, and every
/// slice enqueued afterwards, goes to the global concurrent executor; the loop does that when
/// effects keep its thread too busy (see ``EffectSliceWatch``) and when it ends, so no task is
/// ever stranded.
final class LoopEffectExecutor: TaskExecutor {
    /// Slices waiting for the loop; registered with the loop's poller.
    let slices: Mailbox<UnownedJob>

    /// Creates the executor and its mailbox.
    /// - Throws: ``ZMQError`` when the mailbox's descriptors cannot be made.
    init() throws(ZMQError) {
        slices = try Mailbox<UnownedJob>.forNode()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let slice = UnownedJob(job)
        if !slices.post(slice) { Self.toPool(slice) }
    }

    /// Runs `pending` (slices taken from ``slices``), in order, on the calling thread (the
    /// loop's). Returns how long the longest one ran and all of them together, in nanoseconds
    /// on the monotonic clock.
    func run(_ pending: [UnownedJob]) -> (longest: UInt64, total: UInt64) {
        guard !pending.isEmpty else { return (0, 0) }
        let executor = asUnownedTaskExecutor()
        let started = MonotonicClock.nanoseconds()
        var sliceStart = started, longest: UInt64 = 0
        for slice in pending {
            slice.runSynchronously(on: executor)
            let now = MonotonicClock.nanoseconds()
            longest = max(longest, now &- sliceStart)
            sliceStart = now
        }
        return (longest, sliceStart &- started)
    }

    /// The calling thread's CPU time (user and system), in nanoseconds; a system call.
    static func threadCPUTime() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Hands what waits, and every later slice, to the global concurrent executor; idempotent.
    func moveToPool() {
        for slice in slices.closeForPosting() { Self.toPool(slice) }
    }

    /// Runs `slice` on the global concurrent executor.
    private static func toPool(_ slice: UnownedJob) {
        globalConcurrentExecutor.enqueue(ExecutorJob(slice))
    }
}
