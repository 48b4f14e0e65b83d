/// One run of a subscription, as a runtime starts or stops it.
public struct SubscriptionRun<Subscription> {
    /// The subscription's id (``Reactor/subscriptionID(of:)``).
    public var id: String
    /// The run's number: events name their run by it. Never reused.
    public var run: UInt64
    /// What to run.
    public var subscription: Subscription
    /// The subscription's kind (``Reactor/subscriptionKind(of:)``), used to pick a worker.
    public var kind: String
    /// The index of the last event of this run that was applied, `nil` before the first: the
    /// handler resumes after it.
    public var lastAppliedEvent: UInt64?

    /// Creates a run description.
    public init(id: String, run: UInt64, subscription: Subscription, kind: String, lastAppliedEvent: UInt64?) {
        self.id = id
        self.run = run
        self.subscription = subscription
        self.kind = kind
        self.lastAppliedEvent = lastAppliedEvent
    }
}

extension SubscriptionRun: Sendable where Subscription: Sendable {}
extension SubscriptionRun: Equatable where Subscription: Equatable {}

/// Runs that started and stopped because the state changed.
public struct SubscriptionChanges<Subscription> {
    /// Runs to start, in the order of the reactor's `subscriptions(state:)`.
    public var started: [SubscriptionRun<Subscription>] = []
    /// Runs to stop, oldest first.
    public var stopped: [SubscriptionRun<Subscription>] = []

    /// No change.
    public init() {}

    /// Whether nothing started or stopped.
    public var isEmpty: Bool { started.isEmpty && stopped.isEmpty }

    /// Adds `later` changes after these: a run started and stopped within both is left out.
    mutating func append(_ later: SubscriptionChanges) {
        let laterStopped = Set(later.stopped.map(\.run))
        let startedNow = Set(started.map(\.run))
        started.removeAll { laterStopped.contains($0.run) }
        stopped += later.stopped.filter { !startedNow.contains($0.run) }
        started += later.started
    }
}

extension SubscriptionChanges: Sendable where Subscription: Sendable {}
extension SubscriptionChanges: Equatable where Subscription: Equatable {}

/// What happened to one subscription event.
public enum SubscriptionEventDisposition: Hashable, Sendable {
    /// It was accepted as an action now (and possibly released buffered successors).
    case applied
    /// It is held until the events before it arrive.
    case buffered
    /// It was seen before and was dropped; nothing changed.
    case duplicate
    /// Its run has stopped (the subscription left the state's list): dropped, nothing changed.
    case stale
}

/// The result of ``Sequencer/receive(event:index:run:)``.
public struct SubscriptionEventReceipt<Mutation, Effect> {
    /// What happened to the event itself.
    public var disposition: SubscriptionEventDisposition
    /// Every event accepted as an action because of it, in order: its own, then buffered
    /// successors, each with its jobs.
    public var accepted: [Acceptance<Mutation, Effect>] = []
}

extension SubscriptionEventReceipt: Sendable where Mutation: Sendable, Effect: Sendable {}

/// Why the sequencer refused a subscription event. Refused events change nothing.
public enum SubscriptionEventError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No such run was ever started.
    case unknownRun(UInt64)
    /// The index is so far ahead of what was applied that buffering it would be unbounded.
    case eventOutOfWindow(run: UInt64, index: UInt64, window: UInt32)

    public var description: String {
        switch self {
        case .unknownRun(let run): "unknown subscription run \(run)"
        case .eventOutOfWindow(let run, let index, let window):
            "event \(index) of subscription run \(run) is more than \(window) ahead of the applied ones"
        }
    }
}
