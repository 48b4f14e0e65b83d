/// A coder's state that the calling thread keeps from one coding call to the next: the
/// encoder's ``EncodingSession``, the decoder's ``DecodingContext``.
///
/// Why: a call made and freed its state object, its reusable nodes or links, and for each key
/// type its first keyed container (two metadata lookups, a box and a state): for a small value
/// such as an action or a mutation, most of the call. A kept state keeps its pools, its kept
/// containers (whose key types it has now met before, so every container is kept and handed out
/// again) and what it learnt about types.
///
/// Thread rules: the state belongs to its thread (a pthread key; the thread's exit tears it
/// down), and a call takes it only when no other call on the thread holds it: an `encode(to:)`
/// or `init(from:)` that codes something else meanwhile gets a state of its own, as every call
/// did before. A call with `userInfo` never takes it (its values are the caller's).
final class ThreadKept<State: KeptPerThread> {
    let state = State()
    private var isHeld = false

    deinit {
        state.tearDown()
    }

    /// The thread's state (under `local`) for one call; `nil` when a call on this thread holds it
    /// already (or the thread cannot keep one). Give it back with ``giveBack()``.
    static func take(from local: ThreadLocalObject<ThreadKept<State>>) -> ThreadKept<State>? {
        guard let kept = local.current({ ThreadKept<State>() }), !kept.isHeld else { return nil }
        kept.isHeld = true
        return kept
    }

    /// Ends the call that took the state, which waits for the next call.
    func giveBack() {
        state.endCall()
        isHeld = false
    }
}

/// A coder's state that its thread can keep between calls (``ThreadKept``).
protocol KeptPerThread: AnyObject {
    /// A state for calls without `userInfo`.
    init()
    /// Ends one call: lets go of what belongs to that call alone, keeps the rest.
    func endCall()
    /// Releases everything (the thread exits, or the state was a call's own).
    func tearDown()
}
