/// Where a worker runs its effects' code (``WorkerConfiguration/effectThreads``).
public enum EffectThreads: String, Sendable, Hashable, CaseIterable {
    /// On the worker's loop thread, between reads of its socket: no thread crossing per job,
    /// for effects that await (the network, a timer) and compute little between their awaits.
    /// The worker moves its effects to the shared pool for good, with a warning in its log,
    /// when one slice of an effect (its code between two awaits) takes 10 ms of CPU, or when
    /// effects take more than half of the loop's time over a second; until then a long slice
    /// delays the loop's heartbeats and the other jobs' reports by its length. An effect that
    /// blocks its thread (a lock, a blocking call, waiting for another effect) must use ``pool``.
    case loop
    /// On the shared pool of Swift concurrency (the global concurrent executor), from the start:
    /// for effects that compute for long or block a thread.
    case pool
}
