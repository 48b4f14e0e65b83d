/// What an authority reads beyond the messages every release reads, named in its `heartbeat`s
/// to workers (see ``AuthorityToWorker/heartbeat(features:)``).
///
/// A worker uses a feature only after the authority of its current session named it, so a
/// new worker never sends an older authority a message it would refuse.
package enum AuthorityFeature {
    /// `done` may carry the job's last mutation as a payload frame: one message instead of an
    /// `emit` and a `done` (see ``WorkerMessage/doneWithEmit(job:emitCount:payload:)``).
    package static let doneWithEmit = "done_with_emit"

    /// The authority reads a worker's `features` message and then sends that worker the jobs of
    /// a turn as one `jobs` message when the worker named ``WorkerFeature/jobs``.
    package static let jobBatches = "job_batches"

    /// The authority reads a `reports` message: a worker's `emit` and `done` reports of one turn
    /// in one message (``WorkerMessage/reports(_:)``, ``JobReports``).
    package static let reportBatches = "report_batches"

    /// Everything this release's authority reads.
    package static let all = [doneWithEmit, jobBatches, reportBatches]

    /// The authority sends a client that named ``ClientFeature/acks`` the acks a turn owes it as
    /// one `acks` message. Named in the `features` reply on the actions socket.
    package static let ackBatches = "ack_batches"

    /// What this release's authority names to clients, in its `features` reply.
    package static let forClients = [ackBatches]
}
