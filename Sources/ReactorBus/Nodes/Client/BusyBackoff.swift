/// How an ``ActionClient`` waits for capacity when the authority answers `busy`.
///
/// A `busy` refusal changes nothing on the authority, so the client keeps the action and resends
/// it with the same `(client_id, client_seq)` once a pause has passed; the authority dedups, so a
/// resend can never apply an action twice. While the client pauses it sends nothing new either,
/// so an overloaded authority slows its clients down instead of failing their actions. The pause
/// doubles with every round in which nothing was accepted, from ``initial`` up to ``maximum``,
/// and is jittered (a random 50–100 % of the nominal value) so that clients do not retry in step.
public struct BusyBackoff: Sendable, Hashable {
    /// The first pause after a `busy` refusal. Default 5 ms.
    public var initial: Duration
    /// The longest pause. Default 500 ms.
    public var maximum: Duration
    /// How long one action may keep being refused with `busy` before its `send` fails with
    /// ``ClientError/refused(code:message:)`` `busy`; zero fails it at the first refusal (no
    /// waiting). Default 60 s.
    public var giveUpAfter: Duration

    /// Creates a policy; the defaults suit an authority on the same network.
    public init(initial: Duration = .milliseconds(5), maximum: Duration = .milliseconds(500), giveUpAfter: Duration = .seconds(60)) {
        self.initial = initial
        self.maximum = maximum
        self.giveUpAfter = giveUpAfter
    }

    /// The jittered pause, in milliseconds, after `round` consecutive rounds without an
    /// acceptance (0 for the first). `unit` is a random number in 0...1.
    func pauseMilliseconds(round: Int, unit: Double) -> UInt64 {
        let initial = max(1, self.initial.wholeMilliseconds)
        let maximum = max(initial, self.maximum.wholeMilliseconds)
        let nominal = round >= 32 ? maximum : min(maximum, initial << UInt64(round))
        let jittered = Double(nominal) * (0.5 + 0.5 * min(max(unit, 0), 1))
        return max(1, UInt64(jittered.rounded()))
    }

    /// Checks the values; the client refuses a policy that could not work.
    func validate() throws(ClientError) {
        guard initial > .zero else { throw .invalidArgument("busyBackoff.initial must be positive, got \(initial)") }
        guard maximum >= initial else { throw .invalidArgument("busyBackoff.maximum (\(maximum)) must not be below busyBackoff.initial (\(initial))") }
        guard giveUpAfter >= .zero else { throw .invalidArgument("busyBackoff.giveUpAfter must not be negative, got \(giveUpAfter)") }
    }
}
