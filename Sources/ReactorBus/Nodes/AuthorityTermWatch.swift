import ReactorWire

/// The one place where a node decides whether an authority that answers may be trusted, by its
/// term, when several endpoints serve in turn.
///
/// An authority elected after another one serves a higher term. A node that has seen term `T`
/// must not follow an authority of an older term (a deposed one that still answers, or a standby
/// that was never promoted): it moves on to its next endpoint instead. An authority elected on
/// etcd (`authority --election`) names its term, the epoch of its leadership, in every `pong`
/// and `welcome` (``term(of:)``); one that runs without an election names none (`nil`), and is
/// trusted as before.
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

    /// The term an answer on the actions socket carries: an elected authority's `pong` names it.
    static func term(of reply: AuthorityReply) -> UInt64? {
        if case .pong(_, _, _, _, _, _, let term) = reply { return term }
        return nil
    }

    /// The term a message on the workers socket carries: an elected authority's `welcome`
    /// names it.
    static func term(of message: AuthorityToWorker) -> UInt64? {
        if case .welcome(_, let term) = message { return term }
        return nil
    }
}
