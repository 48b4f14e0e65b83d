import MessagePack
import ReactorCore
import ReactorLog
import Synchronization
import ZeroMQ

/// Runs each job in a task of the worker's runner, which reuses its tasks (jobs that end
/// without suspending run one after another in one task; a job that suspends keeps its task
/// meanwhile, see `EffectTaskPool`): decodes the effect, runs it with retries, encodes each
/// emitted mutation and posts everything to the loop thread's mailbox, in order.
///
/// All the MessagePack work happens in the task: on the loop thread between its socket reads
/// (``EffectThreads/loop``), or on the shared pool. One job's events are posted by one task,
/// one after another, so the mailbox keeps them in order: every `emit` before the `finished`
/// that follows it.
///
/// A class, created once per worker: a job's context refers to it, and reaching a generic
/// struct's fields from that context asked the run-time for the struct's type metadata (a
/// lookup each time) where a class's fields are found through the object itself.
final class WorkerJobLauncher<R: Reactor, Handler: EffectHandler>: Sendable
where Handler.Effect == R.Effect, Handler.Mutation == R.Mutation {
    let reactor: R
    let runner: EffectRunner<Handler>
    let events: Mailbox<WorkerJobEvent>
    /// Announced kinds (empty = all), to warn about jobs outside them.
    let kinds: [String]
    /// The job kinds whose effect was checked against the app's own ``Reactor/kind(of:)``.
    let checkedKinds = CheckedKinds()
    /// An encoded mutation larger than this could never reach the authority.
    let maxPayloadBytes: Int
    let logger: Logger
    /// Configuration values only (each call makes its own session), so one of each serves every
    /// job's task at once.
    let decoder = MessagePackDecoder()
    let encoder = MessagePackEncoder()

    init(reactor: R, runner: EffectRunner<Handler>, events: Mailbox<WorkerJobEvent>, kinds: [String], maxPayloadBytes: Int, logger: Logger) {
        self.reactor = reactor
        self.runner = runner
        self.events = events
        self.kinds = kinds
        self.maxPayloadBytes = maxPayloadBytes
        self.logger = logger
    }

    /// Starts one job in a task (a waiting one, else a new one); cancelling the returned run
    /// cancels the effect.
    /// Its duration counts from here, so it includes the wait for a thread.
    func launch(run: UInt64, job: JobID, kind: String, payload: [UInt8]) -> EffectRun {
        // One object per job that the three closures share: each closure captures only it, so
        // none needs a context of its own (three allocations per job fewer).
        let context = JobContext(launcher: self, run: run, job: job, kind: kind, payload: payload)
        return runner.start(preparing: { () throws(EffectFailure) in try context.effect() },
                            sink: { emitIndex, mutation in context.emit(emitIndex, mutation) },
                            completion: { outcome in context.finish(outcome) })
    }

    /// What one job's task needs: where it came from, and the first mutation that could not be
    /// encoded or sent (shared by its emits and its end).
    private final class JobContext: Sendable {
        let launcher: WorkerJobLauncher
        let run: UInt64
        let job: JobID
        let kind: String
        let payload: [UInt8]
        /// ``MonotonicClock`` nanoseconds: a `ContinuousClock` instant cost each job two calls
        /// into the standard library and 128-bit arithmetic for a figure of the metrics.
        let started = MonotonicClock.nanoseconds()
        private let encodingFailure = Mutex<String?>(nil)

        init(launcher: WorkerJobLauncher, run: UInt64, job: JobID, kind: String, payload: [UInt8]) {
            self.launcher = launcher
            self.run = run
            self.job = job
            self.kind = kind
            self.payload = payload
        }

        func effect() throws(EffectFailure) -> Handler.Effect {
            try launcher.effect(of: job, kind: kind, payload: payload)
        }

        func emit(_ emitIndex: UInt32, _ mutation: Handler.Mutation) {
            let bytes: [UInt8]
            do {
                bytes = try launcher.encoder.encode(mutation)
            } catch {
                recordFailure("mutation \(emitIndex) does not encode: \(error)")
                return
            }
            guard bytes.count <= launcher.maxPayloadBytes else {
                recordFailure("mutation \(emitIndex) is \(bytes.count) bytes, more than the \(launcher.maxPayloadBytes) a message may carry")
                return
            }
            launcher.events.post(.emit(run: run, job: job, emitIndex: emitIndex, payload: bytes))
        }

        func finish(_ outcome: EffectOutcome) {
            var outcome = outcome
            // A mutation that could not be sent leaves a gap the authority can never fill: the job
            // cannot be reported done, whatever the effect returned.
            if case .done = outcome, let message = encodingFailure.withLock({ $0 }) {
                outcome = .failed(EffectFailure(message: message, attempts: 1))
            }
            launcher.events.post(.finished(run: run, job: job, outcome: outcome,
                                           nanoseconds: MonotonicClock.nanoseconds() &- started))
        }

        private func recordFailure(_ message: String) {
            encodingFailure.withLock { if $0 == nil { $0 = message } }
        }
    }

    /// The job's effect, decoded in the job's task; a payload that is not an effect of this app
    /// fails the job before any attempt.
    private func effect(of job: JobID, kind: String, payload: [UInt8]) throws(EffectFailure) -> Handler.Effect {
        let effect: Handler.Effect
        do {
            effect = try decoder.decode(Handler.Effect.self, from: payload)
        } catch {
            throw EffectFailure(message: "effect of kind '\(kind)' does not decode as \(Handler.Effect.self): \(error)", attempts: 0)
        }
        // Checked with the first job of each kind: working out a kind reflects on the effect,
        // and a mismatch (the authority runs another release of the app) shows on the first.
        if checkedKinds.isFirst(kind) {
            let actualKind = reactor.kind(of: effect)
            if actualKind != kind || !EffectKind.serves(kinds, kind: actualKind) {
                logger.warning("job \(job): runs an effect of kind '\(actualKind)' (announced as '\(kind)'; this worker serves \(kinds.isEmpty ? "every kind" : kinds.joined(separator: ",")))")
            }
        }
        return effect
    }
}

/// The job kinds a worker has checked once; a bounded set, so an authority that sends endless
/// new kinds costs a check per job, not memory.
final class CheckedKinds: Sendable {
    /// The most kinds remembered.
    static let limit = 1_024
    private let state = Mutex<(kinds: Set<String>, last: String?)>(([], nil))

    /// Whether `kind` is seen for the first time (or the set is full): then it is to be checked.
    /// The kind of the job before, nearly always the same, is recognised without hashing it.
    func isFirst(_ kind: String) -> Bool {
        state.withLock { state in
            if state.last == kind { return false }
            guard state.kinds.count < Self.limit else {
                guard state.kinds.contains(kind) else { return true }
                state.last = kind
                return false
            }
            state.last = kind
            return state.kinds.insert(kind).inserted
        }
    }
}
