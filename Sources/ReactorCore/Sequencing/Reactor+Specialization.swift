// Specialisation through the reactor's conformance.
//
// The authority, the local store and journal replay are generic over the app's reactor and are
// compiled once, in their own modules, for every reactor. Unspecialised generic code asks the
// runtime for the metadata of every generic type it touches (`[AppliedMutation<R.Mutation>]`,
// `Acceptance<R.Mutation, R.Effect>`, …) and calls the app's code through witness tables and
// value witnesses; for a small action that costs more than the action itself.
//
// The per-event work of the sequencer is therefore `@inlinable`, and reached through requirements
// of `Reactor` whose only implementation is the default below. A default implementation that
// satisfies a requirement is compiled into the witness table of each conformance, in the module
// that declares the conformance, where the reactor's types are known: every app gets the
// sequencer's hot path specialised for its own types without writing anything, and no compiler
// switch is needed.
extension Reactor {
    @inlinable
    public static func _sequencerAccept(_ action: Action, in sequencer: inout Sequencer<Self>) -> Acceptance<Mutation, Effect> {
        sequencer.acceptSpecialized(action)
    }

    @inlinable
    public static func _sequencerAccept(_ action: Action, in sequencer: inout Sequencer<Self>, collecting: Bool,
                                        into applied: inout [AppliedMutation<Mutation>], keeping kept: inout Acceptance<Mutation, Effect>?) -> AcceptanceSummary {
        let acceptance = sequencer.acceptSpecialized(action)
        if collecting { applied.append(contentsOf: acceptance.applied) }
        let summary = AcceptanceSummary(acceptance)
        if summary.keptAcceptance { kept = acceptance }
        return summary
    }

    @inlinable
    public static func _sequencerApply(job: JobID, emitIndex: UInt32, mutation: Mutation,
                                       in sequencer: inout Sequencer<Self>) throws(SequencerError) -> Progress<Mutation> {
        try sequencer.applySpecialized(job: job, emitIndex: emitIndex, mutation: mutation)
    }

    @inlinable
    public static func _sequencerComplete(job: JobID, emitCount: UInt32, in sequencer: inout Sequencer<Self>) throws(SequencerError) -> Progress<Mutation> {
        try sequencer.completeSpecialized(job: job, emitCount: emitCount)
    }

    @inlinable
    public static func _sequencerApply(job: JobID, emitIndex: UInt32, mutation: Mutation, in sequencer: inout Sequencer<Self>,
                                       collecting: Bool, into applied: inout [AppliedMutation<Mutation>]) throws(SequencerError) -> EventOutcome {
        EventOutcome(try sequencer.applySpecialized(job: job, emitIndex: emitIndex, mutation: mutation), collecting: collecting, into: &applied)
    }

    @inlinable
    public static func _sequencerComplete(job: JobID, emitCount: UInt32, in sequencer: inout Sequencer<Self>,
                                          collecting: Bool, into applied: inout [AppliedMutation<Mutation>]) throws(SequencerError) -> EventOutcome {
        EventOutcome(try sequencer.completeSpecialized(job: job, emitCount: emitCount), collecting: collecting, into: &applied)
    }

    @inlinable
    public static func _sequencerOpenEffect(_ id: JobID, in sequencer: Sequencer<Self>) -> Effect? {
        sequencer.openEffectSpecialized(id)
    }

    @inlinable
    public static func _sequencerVisitOpenEffect(_ id: JobID, in sequencer: Sequencer<Self>, _ body: (Effect) -> Void) {
        if let effect = sequencer.openEffectSpecialized(id) { body(effect) }
    }

    @inlinable
    public static func _acceptanceVisitJobs(_ acceptance: Acceptance<Mutation, Effect>, _ body: (JobID, String) -> Void) {
        for index in 0 ..< acceptance.jobs.count { body(acceptance.jobs[index].id, acceptance.jobs[index].kind) }
    }

    @inlinable
    public static func _sequencerReceivedEmits(of id: JobID, in sequencer: Sequencer<Self>) -> UInt32? {
        sequencer.receivedEmitsSpecialized(of: id)
    }
}
