import Synchronization

/// Whether this authority may act as the primary, and in which term: granted by an election
/// (`reactor-node authority --election`), checked by the authority before anything it sends
/// that a client or worker would act on.
///
/// An authority configured with a `Leadership` sends no ack, job or feed message unless a grant
/// is in force and its check still holds (for an etcd lease: the lease is known to outlive the
/// safety margin). The check runs on the authority's own thread, on its own clock, right before
/// it sends: a process paused past its lease and resumed finds the check false and stops
/// without sending what it held (fencing), whatever its lease keeper thread has noticed yet.
/// The term is named in every `pong` and `welcome`, so peers never follow an older authority.
public final class Leadership: Sendable {
    private struct Grant: Sendable {
        var term: UInt64
        var isValid: @Sendable () -> Bool
    }

    private let grant = Mutex<Grant?>(nil)

    /// Nothing granted yet: an authority with this leadership sends nothing that counts.
    public init() {}

    /// Grants term `term` for as long as `isValid` holds.
    public func grant(term: UInt64, while isValid: @escaping @Sendable () -> Bool) {
        grant.withLock { $0 = Grant(term: term, isValid: isValid) }
    }

    /// Ends the grant (the term was lost or resigned).
    public func revoke() {
        grant.withLock { $0 = nil }
    }

    /// The term granted, if any.
    public var term: UInt64? { grant.withLock { $0?.term } }

    /// Whether a grant is in force and its check holds now.
    public var mayAct: Bool {
        guard let current = grant.withLock({ $0 }) else { return false }
        return current.isValid()
    }
}

/// The authority stopped because its leadership ended: it sent nothing after the moment it
/// could no longer be sure it was the only primary.
public struct LeadershipLost: Error, Sendable, CustomStringConvertible {
    /// The term it had, if one was granted.
    public var term: UInt64?

    public var description: String {
        "the leadership of term \(term.map(String.init) ?? "(none)") ended: this authority sent nothing more and stops; "
            + "another one may be primary now. Its data directory may hold records the new primary lacks: "
            + "start it on an empty --data directory to rejoin as a standby"
    }
}
