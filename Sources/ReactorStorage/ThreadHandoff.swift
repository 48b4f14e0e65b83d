import Foundation
import Synchronization

/// The state a background thread (``SnapshotWriter``, ``JournalSyncer``, the authority's
/// snapshot replica) shares with its owner, and the one way to wait for it to change.
///
/// Every read and change happens with `condition` locked too, so a waiter checks its predicate
/// and sleeps atomically; the `Mutex` only gives the compiler its proof. Every change wakes
/// every waiter.
package final class ThreadHandoff<State: Sendable>: Sendable {
    private let condition = NSCondition()
    private let state: Mutex<State>

    package init(_ initial: State) {
        state = Mutex(initial)
    }

    /// Reads or changes the state, then wakes the waiters.
    package func locked<T: Sendable>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return state.withLock { body(&$0) }
    }

    /// Blocks until `take` returns a value (it may change the state as it does), and returns it.
    package func wait<T: Sendable>(until take: (inout State) -> T?) -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while true {
            if let value = state.withLock({ take(&$0) }) { return value }
            condition.wait()
        }
    }
}
