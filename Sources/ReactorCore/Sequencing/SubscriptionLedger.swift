/// The sequencer's bookkeeping of running subscriptions: which runs exist, and for each the next
/// event index it expects and the events that arrived early. Codable so that a checkpoint
/// restores dedup exactly.
///
/// A run is one stay of a subscription in the reactor's `subscriptions(state:)`: a subscription
/// that leaves and enters again (or whose description changes under the same id) is a new run
/// with a new number, and events of its old run are recognised and dropped. Run numbers are
/// never reused.
struct SubscriptionLedger<Subscription: Codable & Hashable, Action: Codable>: Codable {
    /// One running subscription.
    struct Run: Codable {
        /// The run's number, unique over the sequencer's life.
        var number: UInt64
        var subscription: Subscription
        /// Every event below this index is applied.
        var nextIndex: UInt64 = 0
        /// Events that arrived before the gap before them filled.
        var buffered: [UInt64: Action] = [:]
    }

    /// Running subscriptions by id.
    var runs: [String: Run] = [:]
    /// The id of each running run, by number.
    var ids: [UInt64: String] = [:]
    /// The number of the last run started (0 before the first).
    var lastRun: UInt64 = 0
    /// The state version the runs were last worked out at; `nil` before the first time.
    var version: UInt64?
    /// Runs carried over from a checkpoint of another release of the app (whose subscription
    /// type could not be converted), by id: a subscription of the restored state with such an id
    /// keeps the run's number and applied events. Only between a conversion and a restore.
    var carried: [String: CarriedSubscriptionRun]?

    /// The runs of this ledger without their descriptions or buffered events (for a ledger of
    /// other types; buffered events are sent again by the run's handler, which resumes after
    /// the last applied one).
    var carriedRuns: [String: CarriedSubscriptionRun] {
        runs.mapValues { CarriedSubscriptionRun(number: $0.number, nextIndex: $0.nextIndex) }
    }
}

/// A subscription run's number and progress, without its description (see
/// `SubscriptionLedger.carried`).
struct CarriedSubscriptionRun: Codable, Sendable {
    var number: UInt64
    var nextIndex: UInt64
}

extension SubscriptionLedger: Sendable where Subscription: Sendable, Action: Sendable {}
extension SubscriptionLedger.Run: Sendable where Subscription: Sendable, Action: Sendable {}
