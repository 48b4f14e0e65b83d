import Synchronization

/// Who ended one attempt run with an ``EffectDeadlines`` service: the handler returning, the
/// deadline, or the cancellation of the job. The first to claim it wins; the others find it
/// taken and do nothing, as the first child to finish decides in a task group.
final class AttemptRace: Sendable {
    enum Winner: UInt8 {
        case none = 0
        case finished = 1
        case timedOut = 2
        case cancelled = 3
    }

    private let state = Atomic<UInt8>(Winner.none.rawValue)

    /// Claims the attempt for `winner`; false if someone else claimed it first.
    func claim(_ winner: Winner) -> Bool {
        state.compareExchange(expected: Winner.none.rawValue, desired: winner.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    /// Who claimed the attempt (``Winner/none`` while nobody has).
    var winner: Winner { Winner(rawValue: state.load(ordering: .acquiring)) ?? .none }
}
