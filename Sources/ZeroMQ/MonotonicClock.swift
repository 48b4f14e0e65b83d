import Glibc

/// Milliseconds on the monotonic clock: for timers and deadlines, never for wall time.
package enum MonotonicClock {
    /// Milliseconds since an arbitrary fixed point (boot).
    package static func milliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000 + UInt64(now.tv_nsec) / 1_000_000
    }

    /// Nanoseconds since the same fixed point, for latency measurements.
    package static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down, never negative.
    package var wholeMilliseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000 + UInt64(attoseconds / 1_000_000_000_000_000)
    }

    /// The duration in whole nanoseconds, rounded down, never negative.
    package var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }
}
