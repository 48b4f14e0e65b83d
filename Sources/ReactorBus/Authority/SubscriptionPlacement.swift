import ReactorWire
import ReactorCore

/// Which worker runs which subscription run: a pure value the authority's engine drives.
///
/// A worker serves subscriptions once it has said so (`subscriber`, after each `ready`), for the
/// kinds it named (none named: every kind; `NAME.*`: a composed app's part). A run goes to the serving worker with the fewest runs
/// (the lowest routing id on a tie, so the choice does not depend on dictionary order). A run
/// stays with its worker until the state stops wanting it or the worker is lost; subscriptions
/// have no timeout and take no job slot.
struct SubscriptionPlacement: Sendable {
    /// Kinds each serving worker runs (empty: every kind).
    private(set) var subscribers: [PeerID: Set<String>] = [:]
    /// The worker of each assigned run.
    private(set) var owners: [UInt64: PeerID] = [:]
    /// Runs per worker.
    private var load: [PeerID: Int] = [:]
    /// Runs whose worker was lost and that wait for another: placing one again is a restart.
    private(set) var orphaned: Set<UInt64> = []

    /// Whether `peer` serves subscriptions now.
    func serves(_ peer: PeerID) -> Bool { subscribers[peer] != nil }

    /// `peer` runs subscriptions of `kinds` (empty: every kind).
    mutating func serve(_ peer: PeerID, kinds: [String]) {
        subscribers[peer] = Set(kinds)
    }

    /// `peer` no longer serves subscriptions (it left, died or started a new session): its runs
    /// are orphaned, to go to another worker.
    mutating func forget(_ peer: PeerID) {
        subscribers[peer] = nil
        for (run, owner) in owners where owner == peer { orphan(run) }
    }

    /// Takes `run` from its worker to go to another.
    mutating func orphan(_ run: UInt64) {
        guard release(run) != nil else { return }
        orphaned.insert(run)
    }

    /// Whether `run` was orphaned (and no longer is: it is being placed again).
    mutating func adopt(_ run: UInt64) -> Bool { orphaned.remove(run) != nil }

    /// Forgets orphans that are no longer wanted.
    mutating func keepOrphans(_ wanted: Set<UInt64>) {
        if !orphaned.isEmpty { orphaned.formIntersection(wanted) }
    }

    /// The worker for a run of `kind`: serving, not excluded, fewest runs.
    func pick(kind: String, excluding excluded: (PeerID) -> Bool) -> PeerID? {
        var best: (peer: PeerID, load: Int)?
        for (peer, kinds) in subscribers where EffectKind.serves(kinds, kind: kind) {
            guard !excluded(peer) else { continue }
            let runs = load[peer, default: 0]
            if let current = best {
                if runs > current.load { continue }
                if runs == current.load && !peer.bytes.lexicographicallyPrecedes(current.peer.bytes) { continue }
            }
            best = (peer, runs)
        }
        return best?.peer
    }

    /// Records that `peer` runs `run`.
    mutating func assign(_ run: UInt64, to peer: PeerID) {
        release(run)
        owners[run] = peer
        load[peer, default: 0] += 1
    }

    /// Forgets the owner of `run`; returns it.
    @discardableResult
    mutating func release(_ run: UInt64) -> PeerID? {
        guard let peer = owners.removeValue(forKey: run) else { return nil }
        let remaining = load[peer, default: 1] - 1
        load[peer] = remaining > 0 ? remaining : nil
        return peer
    }
}
