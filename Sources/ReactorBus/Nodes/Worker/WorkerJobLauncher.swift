import MessagePack
import ReactorCore
import ReactorLog
import Synchronization
import ZeroMQ

/// Starts jobs as Swift tasks, one per job: decodes the effect, runs it with retries, encodes
/// each emitted mutation and posts everything to the loop thread's mailbox, in order.
///
/// All the MessagePack work happens in the task, off the loop thread; the loop only moves
/// bytes. One job's events are posted by one task, one after another, so the mailbox keeps
/// them in order: every `emit` before the `finished` that follows it.
struct WorkerJobLauncher<R: Reactor, Handler: EffectHandler>: Sendable
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

    /// Starts one job in a task of its own; cancelling the returned run cancels the effect.
    /// Its duration counts from here, so it includes the wait for a thread.
    func launch(run: UInt64, job: JobID, kind: String, payload: [UInt8]) -> EffectRun {
        let started = ContinuousClock.now
        let launcher = self
        let encodingFailure = EncodingFailure()
        let (events, limit, encoder) = (self.events, maxPayloadBytes, self.encoder)
        return runner.start(preparing: {
            launcher.effect(of: job, kind: kind, payload: payload)
        }, sink: { emitIndex, mutation in
            let bytes: [UInt8]
            do {
                bytes = try encoder.encode(mutation)
            } catch {
                encodingFailure.record("mutation \(emitIndex) does not encode: \(error)")
                return
            }
            guard bytes.count <= limit else {
                encodingFailure.record("mutation \(emitIndex) is \(bytes.count) bytes, more than the \(limit) a message may carry")
                return
            }
            events.post(.emit(run: run, job: job, emitIndex: emitIndex, payload: bytes))
        }, completion: { outcome in
            var outcome = outcome
            // A mutation that could not be sent leaves a gap the authority can never fill: the job
            // cannot be reported done, whatever the effect returned.
            if case .done = outcome, let message = encodingFailure.message {
                outcome = .failed(EffectFailure(message: message, attempts: 1))
            }
            events.post(.finished(run: run, job: job, outcome: outcome, elapsed: ContinuousClock.now - started))
        })
    }

    /// The job's effect, decoded in the job's task; a payload that is not an effect of this app
    /// fails the job before any attempt.
    private func effect(of job: JobID, kind: String, payload: [UInt8]) -> Result<Handler.Effect, EffectFailure> {
        let effect: Handler.Effect
        do {
            effect = try decoder.decode(Handler.Effect.self, from: payload)
        } catch {
            return .failure(EffectFailure(message: "effect of kind '\(kind)' does not decode as \(Handler.Effect.self): \(error)", attempts: 0))
        }
        // Checked with the first job of each kind: working out a kind reflects on the effect,
        // and a mismatch (the authority runs another release of the app) shows on the first.
        if checkedKinds.isFirst(kind) {
            let actualKind = reactor.kind(of: effect)
            if actualKind != kind || !EffectKind.serves(kinds, kind: actualKind) {
                logger.warning("job \(job): runs an effect of kind '\(actualKind)' (announced as '\(kind)'; this worker serves \(kinds.isEmpty ? "every kind" : kinds.joined(separator: ",")))")
            }
        }
        return .success(effect)
    }
}

/// The first mutation of a job that could not be encoded or sent; shared by its emits.
private final class EncodingFailure: Sendable {
    private let storage = Mutex<String?>(nil)

    func record(_ message: String) {
        storage.withLock { if $0 == nil { $0 = message } }
    }

    var message: String? { storage.withLock { $0 } }
}

/// The job kinds a worker has checked once; a bounded set, so an authority that sends endless
/// new kinds costs a check per job, not memory.
final class CheckedKinds: Sendable {
    /// The most kinds remembered.
    static let limit = 1_024
    private let kinds = Mutex<Set<String>>([])

    /// Whether `kind` is seen for the first time (or the set is full): then it is to be checked.
    func isFirst(_ kind: String) -> Bool {
        kinds.withLock { kinds in
            guard kinds.count < Self.limit else { return !kinds.contains(kind) }
            return kinds.insert(kind).inserted
        }
    }
}
