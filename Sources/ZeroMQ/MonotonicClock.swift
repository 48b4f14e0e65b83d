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
    /// The duration in whole milliseconds, rounded down, never negative; `UInt64.max` when it
    /// does not fit.
    package var wholeMilliseconds: UInt64 {
        whole(perSecond: 1_000, attosecondsEach: 1_000_000_000_000_000)
    }

    /// The duration in whole nanoseconds, rounded down, never negative; `UInt64.max` when it
    /// does not fit (about 584 years): a deadline past it is never reached, not early.
    package var wholeNanoseconds: UInt64 {
        whole(perSecond: 1_000_000_000, attosecondsEach: 1_000_000_000)
    }

    private func whole(perSecond: UInt64, attosecondsEach: Int64) -> UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: perSecond)
        guard !overflow else { return .max }
        let (total, carry) = whole.addingReportingOverflow(UInt64(attoseconds / attosecondsEach))
        return carry ? .max : total
    }
}

extension UInt64 {
    /// `self + other`, or `UInt64.max` when the sum does not fit: for deadlines that must never
    /// wrap around to the past.
    package func saturatingAdd(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
