/// What a worker reads beyond the messages every release reads, named in its `features`
/// message (see ``WorkerMessage/features(_:)``).
///
/// A worker names them only to an authority that named ``AuthorityFeature/jobBatches``, so an
/// older authority never sees a message it would refuse; the authority uses one only for a
/// worker that named it in its current session.
package enum WorkerFeature {
    /// Several jobs in one `jobs` message (``AuthorityToWorker/jobs(_:)``, ``JobBatch``).
    package static let jobs = "jobs"

    /// Everything this release's worker reads.
    package static let all = [jobs]
}
