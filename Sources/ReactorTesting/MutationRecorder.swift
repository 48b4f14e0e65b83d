import ReactorCore
import Synchronization

/// Middleware that keeps every applied mutation with the state right after it, until drained.
///
/// The sequencer calls it synchronously while the test store mutates the sequencer, so the
/// records come out in application order; the lock only satisfies `Middleware: Sendable`.
final class MutationRecorder<R: Reactor>: Middleware {
    typealias Base = R

    /// One applied mutation and the state it produced.
    struct Record: Sendable {
        var applied: AppliedMutation<R.Mutation>
        var state: R.State
    }

    private let records = Mutex<[Record]>([])

    func didApply(_ applied: AppliedMutation<R.Mutation>, state: R.State) {
        records.withLock { $0.append(Record(applied: applied, state: state)) }
    }

    /// The records since the last call, oldest first.
    func drain() -> [Record] {
        records.withLock { records in
            defer { records.removeAll() }
            return records
        }
    }
}
