/// How much an inspector keeps in memory (`inspect --keep-versions/--keep-actions`): its memory
/// is bounded by these, whatever the cluster does.
struct InspectorLimits: Sendable, Equatable {
    /// Versions kept (the newest): the window that time travel can rebuild without a data
    /// directory, and whose mutations action details show. Each mutation is kept decoded; the
    /// window starts at the newest full state at or before `current - versions`, so it holds up
    /// to `versions + checkpointEvery` mutations.
    var versions: Int = 10_000
    /// Actions kept in the action log (the newest).
    var actions: Int = 1_000
    /// A full state is kept every this many versions inside the window, so that rebuilding any
    /// version reduces at most this many mutations: memory is about
    /// `versions / checkpointEvery + 2` states on top of the mutations.
    var checkpointEvery: Int = 500
    /// Stats samples kept for the charts (one per poll: 600 at 1 s is ten minutes).
    var statsSamples: Int = 600
    /// Mutations held while the inspector waits for a snapshot to apply them to.
    var pendingMutations: Int = 100_000
}
