import Synchronization

/// What one attempt of an effect shares between its emitter's copies and its deadline: the
/// index of its next emit and, when an ``EffectDeadlines`` service times the attempt, who ended
/// it, the handler returning or the deadline.
///
/// The first to claim the end wins; the other finds it taken and does nothing, as the first
/// child to finish decides in a task group. The attempt also knows the run's task to interrupt,
/// so the deadline's action captures this one object and needs no closure context of its own;
/// and the emitter counts in it, so an attempt costs one allocation for both (a job's attempt
/// made an emit counter and a race apart, about a sixth of a worker's allocations per job).
final class EffectAttempt: Sendable {
    enum Winner: UInt8 {
        case finished = 1
        case timedOut = 2
    }

    /// The index the next emit gets.
    private let emits = Atomic<UInt32>(0)
    /// 0 while nobody has claimed the attempt, else the winner's raw value.
    private let state = Atomic<UInt8>(0)
    /// The run, and the generation of its task the attempt runs in; `nil` for an attempt that
    /// no deadline service times.
    private let run: EffectRun?
    private let generation: UInt64

    init(run: EffectRun?, generation: UInt64) {
        self.run = run
        self.generation = generation
    }

    /// An attempt that only counts its emits.
    convenience init() {
        self.init(run: nil, generation: 0)
    }

    /// Takes the next emit index.
    func nextEmit() -> UInt32 {
        emits.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
    }

    /// How many emits were taken so far.
    var emitCount: UInt32 { emits.load(ordering: .acquiring) }

    /// Claims the attempt for `winner`; false if the other claimed it first.
    func claim(_ winner: Winner) -> Bool {
        state.compareExchange(expected: 0, desired: winner.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    /// Whether the run the attempt belongs to was cancelled (false without a run).
    var isRunCancelled: Bool { run?.isCancelled ?? false }

    /// The deadline passed: interrupts the attempt's task, unless the handler finished first.
    func timeOut() {
        if claim(.timedOut) { run?.interrupt(generation: generation) }
    }
}
