import ReactorCore
import Synchronization

/// Deadlines that pass only when a test says so: ``fireAll()`` runs every pending action, so a
/// test decides exactly when an attempt times out.
final class ManualDeadlines: EffectDeadlines {
    private let pending = Mutex<(next: UInt64, actions: [UInt64: @Sendable () -> Void])>((0, [:]))

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> EffectDeadlineToken {
        pending.withLock { state in
            state.next += 1
            state.actions[state.next] = action
            return EffectDeadlineToken(id: state.next, slot: 0)
        }
    }

    func cancel(_ token: EffectDeadlineToken) -> Bool {
        pending.withLock { $0.actions.removeValue(forKey: token.id) != nil }
    }

    /// Deadlines scheduled and neither fired nor cancelled.
    var pendingCount: Int { pending.withLock { $0.actions.count } }

    /// Lets every pending deadline pass, in scheduling order.
    func fireAll() {
        let due = pending.withLock { state in
            defer { state.actions.removeAll() }
            return state.actions.sorted { $0.key < $1.key }.map(\.value)
        }
        for action in due { action() }
    }
}
