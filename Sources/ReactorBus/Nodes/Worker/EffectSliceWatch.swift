/// Decides when effects that run on a worker's loop thread (``LoopEffectExecutor``) must move
/// to the shared pool: when one slice (effect code between two suspensions: one job's, or several
/// jobs' that a reused task runs in a row, see `EffectTaskPool`) takes too much CPU, or when
/// effects together take most of the loop's time.
///
/// Why both: a long slice delays everything the loop does, heartbeats and every other job's
/// reports, by its whole length; effects that are busy computing want every core, and the
/// loop is one thread. Effects that await (the network, a timer) and compute a little between
/// their awaits stay on the loop. The move is for good: a worker whose effects once did this
/// will do it again.
///
/// Slices are timed on the monotonic clock (a few nanoseconds a reading). A slice that is long
/// on that clock may only have been paused by a busy machine, so it counts as long only when
/// the thread's CPU time agrees; that clock costs a system call (about 0.7 µs here), so it is
/// read before a batch of slices at most once a millisecond, and after one only when a slice
/// was long. The share of a window is confirmed the same way: effects took more than half of
/// it only if the thread itself spent more than half of it on a CPU (read once per window), so
/// a machine that stops the worker for seconds in the middle of a slice moves nothing.
struct EffectSliceWatch {
    /// The longest slice that keeps effects on the loop: 10 ms of CPU.
    static var longestSlice: UInt64 { 10_000_000 }
    /// The period over which the loop's share spent in effects is measured: 1 s.
    static var window: UInt64 { 1_000_000_000 }
    /// The largest share of a window effects may take, in percent.
    static var busiestPercent: UInt64 { 50 }
    /// The oldest a CPU time reading taken before a batch may be: 1 ms.
    static var cpuReadingAge: UInt64 { 1_000_000 }

    /// When the current window began (``MonotonicClock`` nanoseconds); `nil` before any batch ran.
    private var windowStart: UInt64?
    /// Nanoseconds spent in slices since `windowStart`.
    private var busy: UInt64 = 0
    /// The thread's CPU time when the window began.
    private var windowCPU: UInt64 = 0
    /// The thread's CPU time read before a recent batch, and when.
    private var cpuReading: (at: UInt64, cpu: UInt64)?

    /// Before a batch of slices that starts at `now`: reads the thread's CPU time (`cpuTime`)
    /// unless the last reading is recent.
    mutating func beforeBatch(now: UInt64, cpuTime: () -> UInt64) {
        if let reading = cpuReading, now &- reading.at < Self.cpuReadingAge { return }
        cpuReading = (now, cpuTime())
    }

    /// After the batch, which ended at `now`: its longest slice and all of its slices on the
    /// clock. Returns why effects must move to the pool, or `nil` while they may stay.
    mutating func afterBatch(longest: UInt64, total: UInt64, now: UInt64, cpuTime: () -> UInt64) -> String? {
        if longest >= Self.longestSlice, let reading = cpuReading, cpuTime() &- reading.cpu >= Self.longestSlice {
            return "effect code ran \(longest / 1_000_000) ms on the loop thread without suspending"
        }
        guard let start = windowStart else {
            windowStart = now
            windowCPU = cpuTime()
            busy = total
            return nil
        }
        busy += total
        let elapsed = now &- start
        guard elapsed >= Self.window else { return nil }
        let cpu = cpuTime()
        defer {
            windowStart = now
            windowCPU = cpu
            busy = 0
        }
        guard busy * 100 > elapsed * Self.busiestPercent, (cpu &- windowCPU) * 100 > elapsed * Self.busiestPercent else { return nil }
        return "effects took \(busy * 100 / elapsed)% of the loop thread's time over \(elapsed / 1_000_000) ms"
    }
}
