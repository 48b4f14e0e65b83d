/// A subscription run whose task a ``WorkerLoop`` is running.
///
/// Not nested in the generic loop, for the reason given at ``WorkerRunningJob``.
struct WorkerSubscriptionRun {
    /// The token its events carry.
    let token: UInt64
    let task: Task<Void, Never>
}
