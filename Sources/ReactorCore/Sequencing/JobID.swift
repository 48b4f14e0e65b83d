/// Identifies one effect of one action: the `effectIndex`-th effect returned for `actionSeq`.
///
/// Job identities are assigned by the authority and never reused, which is what makes
/// duplicates recognisable after retries, re-dispatches and restarts.
public struct JobID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The sequence number of the action whose `mutate` returned the effect.
    public var actionSeq: UInt64
    /// The position of the effect in that action's `async` list.
    public var effectIndex: UInt32

    /// Creates a job identity.
    @inlinable
    public init(actionSeq: UInt64, effectIndex: UInt32) {
        self.actionSeq = actionSeq
        self.effectIndex = effectIndex
    }

    @inlinable
    public static func == (lhs: JobID, rhs: JobID) -> Bool {
        lhs.actionSeq == rhs.actionSeq && lhs.effectIndex == rhs.effectIndex
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(actionSeq)
        hasher.combine(effectIndex)
    }

    /// The hash the standard library's dictionaries and sets use: the identity folded into one
    /// word and that word mixed with the table's seed by a few multiplications and shifts
    /// (SplitMix64's finaliser), instead of a SipHash pass. The authority looks jobs up, inserts
    /// and deletes them in several tables for every job (a delete rehashes the entries after
    /// it), and SipHash was a few percent of its time.
    ///
    /// A keyed hash is not needed here: every job identity a table holds is numbered by the
    /// authority itself (or read from its own snapshot), so nobody outside can pick identities
    /// that collide; a worker's report of a made-up identity is one lookup, never an insert.
    /// Equal identities give equal words; two identities share a word only past 2^40 actions
    /// or 2^24 effects of one action, which costs a probe, never a wrong answer.
    @inlinable
    public func _rawHashValue(seed: Int) -> Int {
        var word = (actionSeq ^ (UInt64(effectIndex) << 40)) &+ UInt64(UInt(bitPattern: seed))
        word = (word ^ (word >> 30)) &* 0xbf58_476d_1ce4_e5b9
        word = (word ^ (word >> 27)) &* 0x94d0_49bb_1331_11eb
        return Int(truncatingIfNeeded: word ^ (word >> 31))
    }

    public static func < (lhs: JobID, rhs: JobID) -> Bool {
        (lhs.actionSeq, lhs.effectIndex) < (rhs.actionSeq, rhs.effectIndex)
    }

    public var description: String { "\(actionSeq).\(effectIndex)" }
}

/// One effect to run, as handed to a worker.
public struct Job<Effect> {
    /// Who the job is.
    public var id: JobID
    /// What to run.
    public var effect: Effect
    /// The effect's kind (see `Reactor.kind(of:)`), used to pick a worker that serves it.
    public var kind: String
    /// The effect's ordered lane, if any.
    public var lane: String?

    /// Creates a job.
    @inlinable
    public init(id: JobID, effect: Effect, kind: String, lane: String?) {
        self.id = id
        self.effect = effect
        self.kind = kind
        self.lane = lane
    }
}

extension Job: Sendable where Effect: Sendable {}
extension Job: Equatable where Effect: Equatable {}
extension Job: Codable where Effect: Codable {}
