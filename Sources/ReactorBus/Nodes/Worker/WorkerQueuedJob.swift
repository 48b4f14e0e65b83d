import ReactorCore

/// A job that reached a ``WorkerLoop`` while every slot was busy (see ``WorkerJobQueue``); it
/// starts when one frees.
///
/// Not nested in the generic loop, for the reason given at ``WorkerRunningJob``.
struct WorkerQueuedJob {
    let job: JobID
    let kind: String
    let payload: [UInt8]
}
