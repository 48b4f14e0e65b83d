/// How far the dispatcher trusts one worker, judged by whether its jobs end in time.
///
/// A small state machine the ``Dispatcher`` drives with job events and time:
///
/// - `healthy`: the worker gets up to its trusted capacity.
/// - `quarantined(until:)`: `quarantineAfter` of its jobs in a row timed out (none reported in
///   time in between). It gets no job until the cool-off ends; the dispatcher has taken back
///   every job it held.
/// - `probation`: the cool-off ended. It gets one job at a time. That job reported in time
///   (`done` or `failed`) makes it healthy again; that job timing out quarantines it again,
///   for twice the previous cool-off (up to ``maxCoolOffFactor`` times the first).
///
/// So a worker that recovered comes back after one cool-off and one job, and a worker that keeps
/// failing holds at most one job per cool-off, ever less often.
struct WorkerHealth: Sendable, Equatable {
    /// Where the worker stands.
    enum State: Sendable, Equatable {
        case healthy
        case quarantined(until: UInt64)
        case probation
    }

    /// The longest cool-off, as a multiple of the first.
    static let maxCoolOffFactor: UInt64 = 32

    private(set) var state: State = .healthy
    /// Job timeouts since the last job the worker reported in time.
    private(set) var consecutiveTimeouts = 0
    /// Quarantines since the worker was last healthy; each one doubles the cool-off.
    private(set) var strikes = 0

    /// Whether the worker gets no job at all now.
    var isQuarantined: Bool {
        if case .quarantined = state { return true }
        return false
    }

    /// Jobs the worker may hold at once, given the capacity a healthy worker is trusted with.
    func capacity(trusted: Int) -> Int {
        switch state {
        case .healthy: trusted
        case .quarantined: 0
        case .probation: min(1, trusted)
        }
    }

    /// One of the worker's jobs was reported in time.
    /// - Returns: whether this ended a probation (the worker is healthy again).
    mutating func reportedInTime() -> Bool {
        consecutiveTimeouts = 0
        guard state == .probation else { return false }
        state = .healthy
        strikes = 0
        return true
    }

    /// One of the worker's jobs timed out.
    /// - Parameters:
    ///   - quarantineAfter: consecutive timeouts that quarantine a healthy worker; 0 never does.
    ///   - coolOff: the first quarantine's length in milliseconds.
    /// - Returns: whether the worker is quarantined by this timeout.
    mutating func timedOut(now: UInt64, quarantineAfter: Int, coolOff: UInt64) -> Bool {
        consecutiveTimeouts += 1
        switch state {
        case .quarantined:
            return false
        case .healthy:
            guard quarantineAfter > 0, consecutiveTimeouts >= quarantineAfter else { return false }
        case .probation:
            break
        }
        let factor = min(UInt64(1) << UInt64(min(strikes, 62)), Self.maxCoolOffFactor)
        let (length, overflow) = coolOff.multipliedReportingOverflow(by: factor)
        let (until, late) = now.addingReportingOverflow(overflow ? UInt64.max : length)
        state = .quarantined(until: late ? UInt64.max : until)
        strikes += 1
        return true
    }

    /// Ends a quarantine whose cool-off has passed: the worker goes on probation.
    /// - Returns: whether it did.
    mutating func wake(now: UInt64) -> Bool {
        guard case .quarantined(let until) = state, now >= until else { return false }
        state = .probation
        return true
    }
}
