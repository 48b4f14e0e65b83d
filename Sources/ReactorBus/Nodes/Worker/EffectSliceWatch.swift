/// Decides when effects that run on a worker's loop thread (``LoopEffectExecutor``) must move
/// to the shared pool: when one slice of an effect (its code between two suspensions) runs too
/// long, or when effects together take most of the loop's time (CPU time, so that a machine
/// busy with other work does not count against them).
///
/// Why both: a long slice delays everything the loop does, heartbeats and every other job's
/// reports, by its whole length; effects that are busy computing want every core, and the
/// loop is one thread. Effects that await (the network, a timer) and compute a little between
/// their awaits stay on the loop. The move is for good: a worker whose effects once did this
/// will do it again.
struct EffectSliceWatch {
    /// The longest slice that keeps effects on the loop: 10 ms.
    static var longestSlice: UInt64 { 10_000_000 }
    /// The period over which the loop's share spent in effects is measured: 1 s.
    static var window: UInt64 { 1_000_000_000 }
    /// The largest share of a window effects may take, in percent.
    static var busiestPercent: UInt64 { 50 }

    /// When the current window began (``MonotonicClock`` nanoseconds); `nil` before any slice ran.
    private var windowStart: UInt64?
    /// The loop thread's CPU time in slices since `windowStart`, in nanoseconds.
    private var busy: UInt64 = 0

    /// Takes one ``LoopEffectExecutor/runPending()`` ending at `now`: its longest slice on the
    /// clock and the CPU time of all its slices. Returns why effects must move to the pool, or
    /// `nil` while they may stay. A slice counts as long only when the CPU time agrees: on a
    /// loaded machine the system may pause the thread in the middle of a short one.
    mutating func record(longest: UInt64, cpu: UInt64, now: UInt64) -> String? {
        if longest >= Self.longestSlice && cpu >= Self.longestSlice {
            return "an effect ran \(longest / 1_000_000) ms without suspending"
        }
        guard let start = windowStart else {
            windowStart = now
            busy = cpu
            return nil
        }
        busy += cpu
        let elapsed = now &- start
        guard elapsed >= Self.window else { return nil }
        defer {
            windowStart = now
            busy = 0
        }
        guard busy * 100 > elapsed * Self.busiestPercent else { return nil }
        return "effects took \(busy * 100 / elapsed)% of the loop thread's time over \(elapsed / 1_000_000) ms"
    }
}
