import ReactorCore
import ReactorWire
import ZeroMQ

/// The authority's view of each job's dispatches, for the feed's `job` topic: kept only while
/// someone follows it, so a cluster without an inspector pays one branch per job event.
///
/// Bounded by the open jobs: a job's entry leaves when it ends.
struct JobWatch {
    private struct Entry {
        var dispatches: UInt32
        var dispatchedAt: UInt64
    }

    private var entries: [JobID: Entry] = [:]

    /// Whether events are made; turning it off forgets every entry.
    var isOn = false {
        didSet { if !isOn { entries.removeAll() } }
    }

    /// The event of `job` sent to `worker` now.
    mutating func dispatched(_ job: JobID, to worker: String?) -> JobEvent {
        let dispatch = (entries[job]?.dispatches ?? 0) + 1
        entries[job] = Entry(dispatches: dispatch, dispatchedAt: MonotonicClock.nanoseconds())
        return JobEvent(.dispatched, job: job, worker: worker, dispatch: dispatch)
    }

    /// The event of `job`'s end (done, failed or cancelled), with the time since its last
    /// dispatch when it was dispatched while watched.
    mutating func ended(_ job: JobID, _ event: JobEvent.Event, worker: String?, attempts: UInt32? = nil) -> JobEvent {
        let entry = entries.removeValue(forKey: job)
        let microseconds = entry.map { (MonotonicClock.nanoseconds() &- $0.dispatchedAt) / 1_000 }
        return JobEvent(event, job: job, worker: worker, dispatch: entry?.dispatches ?? 0, attempts: attempts,
                        microseconds: event == .cancelled ? nil : microseconds)
    }
}
