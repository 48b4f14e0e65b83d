/// What one turn of the worker's loop counted, added to the shared ``WorkerMetrics`` in one
/// locked update at the end of the turn (``WorkerLoop``).
///
/// Why: the loop took the metrics lock for every job received, every emit and every result,
/// several times per job on a busy worker; readers (the `/metrics` endpoint, tests) only need
/// the figures as of the last turn, which ends within the same poll.
struct WorkerTurnTally {
    var jobsReceived: UInt64 = 0
    var jobsDone: UInt64 = 0
    var jobsFailed: UInt64 = 0
    var mutationsEmitted: UInt64 = 0
    var combinedReports: UInt64 = 0
    /// How long each finished job ran, in nanoseconds, for the effect-duration histogram.
    var effectNanoseconds: [UInt64] = []
    var bytesReceived: UInt64 = 0
    var bytesSent: UInt64 = 0
    /// Whether the running or queued jobs changed, so their counts must be copied.
    var countsChanged = false

    /// Whether there is nothing to add.
    var isEmpty: Bool {
        jobsReceived == 0 && jobsDone == 0 && jobsFailed == 0 && mutationsEmitted == 0 && combinedReports == 0 && effectNanoseconds.isEmpty
            && bytesReceived == 0 && bytesSent == 0 && !countsChanged
    }

    /// Counts nothing again, keeping the durations' storage: a new tally for every turn grew
    /// its array from nothing by doubling, allocating ever larger buffers for a busy turn's jobs.
    mutating func reset() {
        effectNanoseconds.removeAll(keepingCapacity: true)
        var fresh = WorkerTurnTally()
        swap(&fresh.effectNanoseconds, &effectNanoseconds)
        self = fresh
    }

    /// Adds the tally to `metrics`, with the current `running` and `queued` counts if they changed.
    func add(to metrics: inout WorkerMetrics, running: Int, queued: Int) {
        metrics.jobsReceived += jobsReceived
        metrics.jobsDone += jobsDone
        metrics.jobsFailed += jobsFailed
        metrics.mutationsEmitted += mutationsEmitted
        metrics.combinedReports += combinedReports
        for nanoseconds in effectNanoseconds { metrics.effectDuration.observe(Double(nanoseconds) / 1e9) }
        metrics.bytesReceived += bytesReceived
        metrics.bytesSent += bytesSent
        if countsChanged {
            metrics.running = running
            metrics.queued = queued
        }
    }
}
