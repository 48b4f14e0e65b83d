import Synchronization

/// Who ended one attempt run with an ``EffectDeadlines`` service: the handler returning, or the
/// deadline. The first to claim it wins; the other finds it taken and does nothing, as the first
/// child to finish decides in a task group.
final class AttemptRace: Sendable {
    enum Winner: UInt8 {
        case finished = 1
        case timedOut = 2
    }

    /// 0 while nobody has claimed the attempt, else the winner's raw value.
    private let state = Atomic<UInt8>(0)

    /// Claims the attempt for `winner`; false if the other claimed it first.
    func claim(_ winner: Winner) -> Bool {
        state.compareExchange(expected: 0, desired: winner.rawValue, ordering: .acquiringAndReleasing).exchanged
    }
}
