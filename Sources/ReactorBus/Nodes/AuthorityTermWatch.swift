import ReactorWire

/// The one place where a node decides whether an authority that answers may be trusted, by its
/// term, when several endpoints serve in turn.
///
/// An authority elected after another one serves a higher term. A node that has seen term `T`
/// must not follow an authority of an older term (a deposed one that still answers, or a standby
/// that was never promoted): it moves on to its next endpoint instead. Authorities of this
/// protocol version do not announce a term yet (their `start_id` is random, not ordered), so every
/// answer carries `nil` and is trusted; once one does, it is read where the node reads the
/// answer (``term(of:)``), and this check applies unchanged.
struct AuthorityTermWatch: Sendable, Hashable {
    /// What ``check(_:)`` found.
    enum Verdict: Sendable, Hashable {
        /// The term is the highest seen (or unknown): follow this authority.
        case trusted
        /// The term is older than `highest`, seen before: do not follow this authority.
        case older(term: UInt64, highest: UInt64)
    }

    /// The highest term seen so far; `nil` before any authority named one.
    private(set) var highest: UInt64?

    /// Checks the term an authority answered with (`nil`: it names none) and remembers it if it
    /// is the highest.
    mutating func check(_ term: UInt64?) -> Verdict {
        guard let term else { return .trusted }
        if let highest, term < highest { return .older(term: term, highest: highest) }
        highest = term
        return .trusted
    }

    /// The term an answer on the actions socket carries: none in this protocol version.
    static func term(of reply: AuthorityReply) -> UInt64? {
        nil
    }

    /// The term a message on the workers socket carries: none in this protocol version.
    static func term(of message: AuthorityToWorker) -> UInt64? {
        nil
    }
}
