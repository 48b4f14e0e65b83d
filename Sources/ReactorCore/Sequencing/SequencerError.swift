/// Why the sequencer refused an event. Refused events change nothing.
public enum SequencerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The job was never issued: its action is in the future, or the action has no such effect.
    case unknownJob(JobID)
    /// The emit index is so far ahead of what was applied that buffering it would be unbounded.
    case emitOutOfWindow(job: JobID, emitIndex: UInt32, window: UInt32)

    public var description: String {
        switch self {
        case .unknownJob(let job): "unknown job \(job)"
        case .emitOutOfWindow(let job, let index, let window):
            "emit \(index) of job \(job) is more than \(window) ahead of the applied ones"
        }
    }
}
