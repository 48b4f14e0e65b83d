/// How often and how patiently a runtime runs an effect before it gives up.
public struct RetryPolicy: Sendable, Hashable, Codable {
    /// Total attempts, the first included (at least 1).
    public var maxAttempts: Int
    /// Pause before the second attempt; doubles for each further attempt.
    public var initialBackoff: Duration
    /// The longest pause between attempts.
    public var maxBackoff: Duration
    /// How long one attempt may run before it counts as failed; `nil` waits forever.
    public var timeout: Duration?

    /// Creates a policy; `maxAttempts` below 1 is taken as 1.
    public init(maxAttempts: Int = 3, initialBackoff: Duration = .milliseconds(50),
                maxBackoff: Duration = .seconds(2), timeout: Duration? = .seconds(30)) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.timeout = timeout
    }

    /// Three attempts, 50 ms backoff doubling up to 2 s, 30 s per attempt.
    public static let standard = RetryPolicy()

    /// One attempt, no timeout: failures go straight to the failure hook.
    public static let once = RetryPolicy(maxAttempts: 1, timeout: nil)

    /// The pause before attempt number `attempt` (2 for the first retry).
    public func backoff(beforeAttempt attempt: Int) -> Duration {
        guard attempt > 1 else { return .zero }
        var pause = initialBackoff
        for _ in 2..<attempt {
            pause = pause * 2
            if pause >= maxBackoff { return maxBackoff }
        }
        return min(pause, maxBackoff)
    }
}
