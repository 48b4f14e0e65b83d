/// Why an effect failed for good, in a form that can cross a process boundary.
///
/// Errors thrown by effect handlers are arbitrary Swift values; a worker reports them to the
/// authority as text, so the failure hook sees the description, not the original error.
public struct EffectFailure: Error, Codable, Sendable, Hashable, CustomStringConvertible {
    /// A human-readable reason (the thrown error's description, or `"timed out after 2.0 s"`).
    public var message: String
    /// How many attempts were made before giving up.
    public var attempts: Int

    /// Creates a failure description.
    public init(message: String, attempts: Int) {
        self.message = message
        self.attempts = attempts
    }

    public var description: String { "\(message) (after \(attempts) attempt\(attempts == 1 ? "" : "s"))" }
}
