/// A state machine in the ReactorKit/Redux style whose parts can cross a process boundary.
///
/// An app author describes *what* happens; a runtime (the local ``Store`` or the distributed
/// authority) decides *where*. `mutate` turns an action into mutations that are applied at once
/// (`sync`) and effects that run elsewhere (`async`); `reduce` applies one mutation. Both must be
/// pure and deterministic: the authority replays them after a restart and expects the same result.
///
/// Every associated type is `Codable & Sendable` because actions travel from clients, effects to
/// workers, mutations back, and the state out to observers, all as MessagePack.
public protocol Reactor: Sendable {
    /// What a client asks for.
    associatedtype Action: Codable & Sendable
    /// One change to the state; applied by `reduce`, in order, exactly once.
    associatedtype Mutation: Codable & Sendable
    /// A serialisable description of slow work that a worker runs and that emits mutations.
    associatedtype Effect: Codable & Sendable
    /// The whole state. Published as snapshots.
    associatedtype State: Codable & Sendable

    /// The state before the first action.
    var initialState: State { get }

    /// Turns an action into the mutations to apply now and the effects to run elsewhere.
    func mutate(state: State, action: Action) -> Mutations<Mutation, Effect>

    /// Applies one mutation. Must not have side effects.
    func reduce(state: inout State, mutation: Mutation)

    /// Mutations to apply when an effect has failed for good (after the runtime's retries).
    ///
    /// The default applies nothing.
    func failed(effect: Effect, error: EffectFailure) -> [Mutation]

    /// The ordered lane of an effect, or `nil` when its results may interleave freely.
    ///
    /// Results of effects that share a lane are applied in the order of their actions
    /// (`actionSeq`), however the workers finish. The default puts no effect in a lane.
    func lane(for effect: Effect) -> String?

    /// The kind of an effect: what a worker announces it can run.
    ///
    /// The default is the enum case name of the effect (`slowIncrease` for
    /// `.slowIncrease` or `.slowIncrease(by: 2)`), found by reflection. The sequencer asks once
    /// per distinct value for a small trivially copyable effect (no `String`, no array in it) and
    /// once per job for any other; an app whose effects carry such payloads and are its hot path
    /// can return the same names from a `switch`. Must depend on the effect alone.
    func kind(of effect: Effect) -> String

    // MARK: Transforms (see Reactor+Transforms.swift)

    /// Actions applied once, when a fresh state starts (nothing accepted yet, version 0): the
    /// seed libraries' `transform(action:)` with `prepend`. The default is none.
    var initialActions: [Action] { get }

    /// Mutations applied once, before ``initialActions``, when a fresh state starts: the seed
    /// libraries' `transform(mutation:)` with `prepend`. The default is none.
    var initialMutations: [Mutation] { get }

    /// The actions an incoming action stands for: map it, expand it, or drop it (`[]`).
    /// The default is `[action]`.
    func transform(action: Action) -> [Action]

    /// Named views of the state that observers can follow instead of the whole state: they get
    /// a value only when it changes. The default is none.
    var projections: [AnyProjection<State>] { get }

    // MARK: Cancellation

    /// The id under which an effect's job can be cancelled, or `nil` (the default) when it
    /// cannot be.
    ///
    /// A job is cancelled by an action whose `mutate` lists its id in ``Mutations/cancel``, or
    /// by a later effect with the same id whose ``cancelsInFlight(_:)`` is true. Cancelling is
    /// decided when that action is accepted: the job's results not applied by then are dropped,
    /// whatever the worker still sends, and the worker's task is cancelled.
    func cancelID(for effect: Effect) -> CancelID?

    /// Whether a new job of this effect cancels the open jobs that have the same
    /// ``cancelID(for:)`` (a search that replaces the previous one). The default is `false`.
    func cancelsInFlight(_ effect: Effect) -> Bool

    /// Mutations to apply when a job of this effect is cancelled (a "search cancelled" flag),
    /// right after the cancelling action's sync mutations. The default applies nothing.
    func cancelled(effect: Effect) -> [Mutation]

    // MARK: Subscriptions

    /// A serialisable description of a long-running source of actions (a price feed, a queue
    /// consumer, a timer): runs as long as the state wants it. Defaults to ``NoSubscription``.
    associatedtype Subscription: Codable & Sendable & Hashable = NoSubscription

    /// The subscriptions that should be running in `state`; the runtime starts the ones that
    /// enter this list and stops the ones that leave it. Must be pure and deterministic, like
    /// `reduce`. The default is none.
    func subscriptions(state: State) -> [Subscription]

    /// The stable identity of a subscription, unique in one `subscriptions(state:)` list. The
    /// ledger and the wire name a subscription by it, so it must be the same in every process
    /// and after a restart. The default is `String(describing: subscription)`; override it for
    /// descriptions holding a `Set` or `Dictionary`, whose text order is not stable.
    func subscriptionID(of subscription: Subscription) -> String

    /// The kind of a subscription: what a worker announces it can run. The default is the enum
    /// case name, as for effects (`ticker` for `.ticker(symbol: "ACME")`).
    func subscriptionKind(of subscription: Subscription) -> String

    // MARK: Specialisation

    /// ``Sequencer/accept(_:)`` compiled for this reactor's own types. Not for apps to implement:
    /// ReactorCore's default is the only right one.
    ///
    /// It is a requirement, not a plain method, so that the module that declares the conformance
    /// compiles the sequencer's per-action work for its `Action`, `Mutation` and `State`. The
    /// authority is generic over the reactor and compiled once for all of them; through this
    /// witness it runs that specialised copy instead of looking the reactor's types up at run time
    /// on every action (see Reactor+Specialization.swift).
    static func _sequencerAccept(_ action: Action, in sequencer: inout Sequencer<Self>) -> Acceptance<Mutation, Effect>

    /// ``Sequencer/accept(_:)`` compiled for this reactor's own types, for a runtime that is not:
    /// the mutations it applies are appended to `applied` when `collecting`, and what else it did
    /// comes back as an ``AcceptanceSummary``, a value whose type does not depend on the reactor.
    /// Only when the summary says so (the action issued, cancelled or finished jobs) is the whole
    /// ``Acceptance`` stored in `kept`; otherwise `kept` is left as it was. Not for apps to
    /// implement.
    static func _sequencerAccept(_ action: Action, in sequencer: inout Sequencer<Self>, collecting: Bool,
                                 into applied: inout [AppliedMutation<Mutation>], keeping kept: inout Acceptance<Mutation, Effect>?) -> AcceptanceSummary

    /// ``Sequencer/apply(job:emitIndex:mutation:)`` compiled for this reactor's own types, like
    /// ``_sequencerAccept(_:in:)``. Not for apps to implement.
    static func _sequencerApply(job: JobID, emitIndex: UInt32, mutation: Mutation, in sequencer: inout Sequencer<Self>) throws(SequencerError) -> Progress<Mutation>

    /// ``Sequencer/complete(job:emitCount:)`` compiled for this reactor's own types, like
    /// ``_sequencerAccept(_:in:)``. Not for apps to implement.
    static func _sequencerComplete(job: JobID, emitCount: UInt32, in sequencer: inout Sequencer<Self>) throws(SequencerError) -> Progress<Mutation>

    /// ``Sequencer/apply(job:emitIndex:mutation:)`` compiled for this reactor's own types, for a
    /// runtime that is not: the mutations it applies are appended to `applied` when
    /// `collecting`, and what else it did comes back as an ``EventOutcome``, a value whose type
    /// does not depend on the reactor. Not for apps to implement.
    static func _sequencerApply(job: JobID, emitIndex: UInt32, mutation: Mutation, in sequencer: inout Sequencer<Self>,
                                collecting: Bool, into applied: inout [AppliedMutation<Mutation>]) throws(SequencerError) -> EventOutcome

    /// ``Sequencer/complete(job:emitCount:)`` compiled for this reactor's own types, for a runtime
    /// that is not, like ``_sequencerApply(job:emitIndex:mutation:in:collecting:into:)``. Not
    /// for apps to implement.
    static func _sequencerComplete(job: JobID, emitCount: UInt32, in sequencer: inout Sequencer<Self>,
                                   collecting: Bool, into applied: inout [AppliedMutation<Mutation>]) throws(SequencerError) -> EventOutcome

    /// ``Sequencer/openEffect(_:)`` compiled for this reactor's own types, like
    /// ``_sequencerAccept(_:in:)`` (the authority reads each job's effect to send it). Not for
    /// apps to implement.
    static func _sequencerOpenEffect(_ id: JobID, in sequencer: Sequencer<Self>) -> Effect?

    /// Calls `body` with the effect of open job `id` (not at all when the job is not open),
    /// compiled for this reactor's own types, like ``_sequencerAccept(_:in:)``. The authority
    /// encodes each job's effect through it: ``_sequencerOpenEffect(_:in:)``'s optional result
    /// made its unspecialised caller look up `Optional<Effect>` at run time, per job. Not for
    /// apps to implement.
    static func _sequencerVisitOpenEffect(_ id: JobID, in sequencer: Sequencer<Self>, _ body: (Effect) -> Void)

    /// Calls `body` with the identity and kind of each job of `acceptance`, in order, compiled
    /// for this reactor's own types, like ``_sequencerAccept(_:in:)``: reading `jobs` from code
    /// that is not specialised looks up `Job<Effect>` at run time, per action. Not for apps to
    /// implement.
    static func _acceptanceVisitJobs(_ acceptance: Acceptance<Mutation, Effect>, _ body: (JobID, String) -> Void)

    /// ``Sequencer/receivedEmits(of:)`` compiled for this reactor's own types, like
    /// ``_sequencerAccept(_:in:)`` (the authority asks it at each job's end). Not for apps to
    /// implement.
    static func _sequencerReceivedEmits(of id: JobID, in sequencer: Sequencer<Self>) -> UInt32?
}

extension Reactor {
    public func failed(effect: Effect, error: EffectFailure) -> [Mutation] { [] }

    public func lane(for effect: Effect) -> String? { nil }

    public func kind(of effect: Effect) -> String { EffectKind.caseName(of: effect) }
}
