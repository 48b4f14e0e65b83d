/// The calling thread's ``EncodingSession``, kept from one encode call to the next.
///
/// Why: a session, its encoder nodes, its kept keyed containers and their states were made and
/// freed for every call, and a call that encodes one small value (an action, a mutation: a
/// container or two) spent a large part of its time on those allocations and on the first
/// container of each key type (two metadata lookups and a box). A kept session keeps its nodes,
/// its kept containers (whose key types it has now met before, so every container is kept and
/// handed out again) and what it learnt about types.
///
/// Thread rules: the session belongs to its thread (a pthread key; the thread's exit tears it
/// down), and a call takes it only when no other call on the thread holds it: an `encode(to:)`
/// that encodes something else with a `MessagePackEncoder` meanwhile gets a session of its own,
/// as every call did before. A session with `userInfo` is never kept (its values are the caller's).
final class ThreadEncodingSession {
    let session = EncodingSession(sortKeys: true, userInfo: [:])
    private var isHeld = false

    deinit {
        session.tearDown()
    }

    /// The thread's session for one call, with `sortKeys`; `nil` when a call on this thread holds
    /// it already (or the thread cannot keep one). Give it back with ``giveBack()``.
    static func take(sortKeys: Bool) -> ThreadEncodingSession? {
        guard let held = local.current({ ThreadEncodingSession() }), !held.isHeld else { return nil }
        held.isHeld = true
        held.session.sortKeys = sortKeys
        return held
    }

    /// Ends the call that took the session: its spare writers go to the thread's pool, and the
    /// session waits for the next call.
    func giveBack() {
        session.endCall()
        isHeld = false
    }

    private static let local = ThreadLocalObject<ThreadEncodingSession>()
}
