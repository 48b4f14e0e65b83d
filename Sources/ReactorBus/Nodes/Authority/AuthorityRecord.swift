import ReactorCore

/// One journal record: an event that changed (or may change) the authority's state.
///
/// The journal holds inputs, not results: replaying these records through the same pure
/// `Sequencer` reproduces state, version, job bookkeeping and client dedup exactly. Payloads are
/// kept as the MessagePack bytes that arrived, so nothing is encoded twice.
package enum AuthorityRecord: Codable, Sendable, Equatable {
    /// An accepted action, with the client identity that makes resends idempotent.
    case accepted(client: String, clientSeq: UInt64, action: [UInt8])
    /// A mutation a worker emitted (applied or buffered).
    case emitted(job: JobID, emitIndex: UInt32, mutation: [UInt8])
    /// A job's DONE.
    case completed(job: JobID, emitCount: UInt32)
    /// A job's FAILED.
    case failed(job: JobID, failure: EffectFailure)
    /// The app's schema version of the records after this one (``AppSchema``): written when an
    /// authority starts on a journal whose records so far were of another version (records
    /// before the first marker, or after a snapshot, are of the snapshot's version, else 1).
    case schema(version: UInt32)
    /// The reactor's initial mutations and actions were applied, as action 1 of a fresh state
    /// (`Sequencer.start()`); replay applies them again from the app's code.
    case started
    /// The `index`-th event of subscription run `run` (applied or buffered), with the bytes of
    /// the action it carries: replaying it reproduces the run's dedup bookkeeping.
    case subscriptionEvent(run: UInt64, index: UInt64, action: [UInt8])
}

/// The authority's durable snapshot: everything needed to continue without the journal before it.
package struct AuthorityCheckpoint<R: Reactor>: Codable, Sendable {
    /// The app the snapshot belongs to.
    var app: String
    /// State, version, actionSeq and the job ledger.
    var sequencer: SequencerCheckpoint<R>
    /// Idempotent-retry bookkeeping.
    var clients: ClientLedger
    /// For actions with unfinished jobs: the client that sent them (for in-flight limits).
    var actionClients: [UInt64: String]
    /// The app's schema version of the values inside (``AppSchema``); absent (1) in snapshots
    /// written before schema versions existed.
    var schema: UInt32?
}

/// The few fields of a stored checkpoint needed before its app values can be decoded.
struct CheckpointHeader: Decodable {
    var app: String
    var schema: UInt32?
}
