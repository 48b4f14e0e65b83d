import ReactorCore

/// What a running job tells the loop thread, through the worker's mailbox.
///
/// Every event carries the `run` token the loop gave the job when it started it. A job that
/// was abandoned (cancelled on reconnect, restarted, or left behind at a stop) keeps posting
/// until its task notices the cancellation; the loop recognises those stale events by their
/// token and drops them, so the authority never hears from a run it no longer expects.
enum WorkerJobEvent: Sendable {
    /// The job emitted its `emitIndex`-th mutation (already encoded).
    case emit(run: UInt64, job: JobID, emitIndex: UInt32, payload: [UInt8])
    /// The job's runner returned, `nanoseconds` after the job started.
    case finished(run: UInt64, job: JobID, outcome: EffectOutcome, nanoseconds: UInt64)
    /// A subscription run's task sent its `index`-th event (already encoded); `token` tells the
    /// task apart from an earlier one of the same run.
    case subscriptionEvent(token: UInt64, run: UInt64, index: UInt64, payload: [UInt8])
}
