import ReactorCore
import ReactorWire

/// What a worker reports for one batch of its jobs' events, when the authority reads a `done`
/// that carries the job's last mutation (``AuthorityFeature/doneWithEmit``).
///
/// Why: most effects emit one mutation and return; sent as an `emit` and a `done`, that is two
/// messages through both sockets where one does. Each job's latest emit of the batch is held to
/// the end of the batch: if the job's end is in the same batch, both go as one `done`; if not,
/// the emit goes when the batch ends. No emit waits for anything but the rest of its batch, and
/// a job's messages keep their order.
///
/// A value, fed by the loop and tested on its own: the loop sends what each call returns.
struct ReportBatch {
    /// An emit held to the end of the batch; `run` tells it apart from an abandoned run's.
    struct Held: Equatable {
        let run: UInt64
        let emitIndex: UInt32
        let payload: [UInt8]

        /// The `emit` that sends it for `job`.
        func emit(of job: JobID) -> WorkerMessage { .emit(job: job, emitIndex: emitIndex, payload: payload) }
    }

    private var held: [JobID: Held] = [:]

    /// Whether no emit is held.
    var isEmpty: Bool { held.isEmpty }

    /// Holds the `emitIndex`-th mutation of `job`; returns the job's emit held before it, to send now.
    mutating func emit(_ job: JobID, run: UInt64, emitIndex: UInt32, payload: [UInt8]) -> WorkerMessage? {
        held.updateValue(Held(run: run, emitIndex: emitIndex, payload: payload), forKey: job)?.emit(of: job)
    }

    /// What ends a job: the emit held for it, sent first (`nil` when none is held, or when it
    /// rides in the `done`), then the report. A value, not an array: one ends every job.
    struct Ending: Equatable {
        let emit: WorkerMessage?
        let report: WorkerMessage

        /// Both, in the order they are sent.
        var messages: [WorkerMessage] { (emit.map { [$0] } ?? []) + [report] }
    }

    /// The messages that end `job`, whose run reported `outcome`: one `done` carrying the held
    /// emit when it is the job's last, else the held emit (if any) and then the report.
    mutating func end(_ job: JobID, outcome: EffectOutcome) -> Ending {
        let last = held.removeValue(forKey: job)
        switch outcome {
        case .done(let emitCount):
            if let last, last.emitIndex &+ 1 == emitCount {
                return Ending(emit: nil, report: .doneWithEmit(job: job, emitCount: emitCount, payload: last.payload))
            }
            return Ending(emit: last?.emit(of: job), report: .done(job: job, emitCount: emitCount))
        case .failed(let failure):
            return Ending(emit: last?.emit(of: job), report: .failed(job: job, failure: failure))
        }
    }

    /// Ends the batch: the emits still held, of the jobs for which `isCurrent(job, run)` (the
    /// run is still the job's), in job order.
    mutating func close(isCurrent: (JobID, UInt64) -> Bool) -> [WorkerMessage] {
        guard !held.isEmpty else { return [] }
        let emits = held.sorted { $0.key < $1.key }.compactMap { job, emit in isCurrent(job, emit.run) ? emit.emit(of: job) : nil }
        held.removeAll(keepingCapacity: true)
        return emits
    }

    /// Forgets every held emit (the session ended: its runs were abandoned).
    mutating func discard() { held.removeAll() }
}
