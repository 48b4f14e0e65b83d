import Synchronization

/// Who ended one attempt run with an ``EffectDeadlines`` service: the handler returning, or the
/// deadline. The first to claim it wins; the other finds it taken and does nothing, as the first
/// child to finish decides in a task group.
///
/// It also knows the run's task to interrupt, so the deadline's action captures this one object
/// and needs no closure context of its own (an allocation fewer per attempt).
final class AttemptRace: Sendable {
    enum Winner: UInt8 {
        case finished = 1
        case timedOut = 2
    }

    /// 0 while nobody has claimed the attempt, else the winner's raw value.
    private let state = Atomic<UInt8>(0)
    /// The run, and the generation of its task the attempt runs in.
    private let run: EffectRun
    private let generation: UInt64

    init(run: EffectRun, generation: UInt64) {
        self.run = run
        self.generation = generation
    }

    /// Claims the attempt for `winner`; false if the other claimed it first.
    func claim(_ winner: Winner) -> Bool {
        state.compareExchange(expected: 0, desired: winner.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    /// The deadline passed: interrupts the attempt's task, unless the handler finished first.
    func timeOut() {
        if claim(.timedOut) { run.interrupt(generation: generation) }
    }
}
