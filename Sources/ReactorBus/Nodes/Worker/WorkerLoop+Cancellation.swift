import ReactorCore

/// The authority's `cancel`: the job was cancelled, so its task is cancelled (the handler sees
/// `CancellationError` / `Task.isCancelled`) and nothing more is sent for it.
extension WorkerLoop {
    /// Stops a cancelled job, running or waiting for a slot; a job the worker does not hold
    /// (it ended, or its report crossed the cancel) is ignored.
    func cancel(_ job: JobID) {
        if let entry = running.removeValue(forKey: job) {
            // Its later events carry a run token no longer in `running`: dropped, never sent.
            entry.effect.cancel()
            startQueued()
        } else if !queued.remove(job) {
            logger.debug("job \(job): cancelled by the authority, but not held here (already reported)")
            return
        }
        metrics.update { $0.jobsCancelled += 1 }
        logger.info("job \(job): cancelled by the authority")
        publishCounts()
    }
}
