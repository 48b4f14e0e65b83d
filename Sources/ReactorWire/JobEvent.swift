import ReactorCore

/// One step of a job as the authority saw it: what the inspector shows as a job's worker,
/// attempts and duration. Published on the feed topic `job`, only while someone subscribes.
package struct JobEvent: Sendable, Equatable {
    /// What happened.
    package enum Event: String, Sendable {
        /// Sent to `worker` (again, when `dispatch` > 1: after a lost worker or a timeout).
        case dispatched
        /// The worker reported the effect's end; `microseconds` since the dispatch.
        case done
        /// The effect failed for good after `attempts` attempts on the worker.
        case failed
        /// An action cancelled the job.
        case cancelled
    }

    package var event: Event
    package var job: JobID
    /// The name the worker announced (`--name`), if one holds the job.
    package var worker: String?
    /// The job's dispatches so far, counted from 1 (0: never dispatched while observed).
    package var dispatch: UInt32
    /// A failure's attempts on its last worker.
    package var attempts: UInt32?
    /// For `done` and `failed`: authority time from the last dispatch to the report.
    package var microseconds: UInt64?

    package init(_ event: Event, job: JobID, worker: String?, dispatch: UInt32, attempts: UInt32? = nil, microseconds: UInt64? = nil) {
        self.event = event
        self.job = job
        self.worker = worker
        self.dispatch = dispatch
        self.attempts = attempts
        self.microseconds = microseconds
    }
}
