/// Cancellation, decided inside `accept` from the accepted action alone, so that replaying the
/// journal's actions cancels exactly the same jobs at exactly the same point.
///
/// Rules, in this order, right after the action's sync mutations:
/// 1. every open job of an earlier action whose ``Reactor/cancelID(for:)`` is listed in
///    ``Mutations/cancel`` is cancelled, in job order;
/// 2. then each of the action's new jobs whose effect ``Reactor/cancelsInFlight(_:)`` cancels the
///    open jobs before it (earlier actions', and earlier effects of the same action) with the
///    same cancel id, in job order.
///
/// Cancelling a job drops its buffered, not yet applied emits (and a held DONE or FAILED),
/// applies the reactor's ``Reactor/cancelled(effect:)`` mutations at once (origin `.cancelled`,
/// the job's `actionSeq`) and closes the job: everything it sends later is a duplicate of a spent
/// job, dropped. A cancelled job first in its lane lets the next job of the lane apply what it
/// has waiting. Cancelling a job that already ended does nothing.
extension Sequencer {
    /// Applies the cancellations of the action just accepted (see the rules above).
    ///
    /// Inlinable, as the rest of `accept`: an action with jobs and nothing to cancel (the common
    /// case) only asks each new job's effect whether it cancels in flight, in code compiled for
    /// the reactor; the cancelling itself stays out of line.
    @inlinable
    mutating func cancel(_ ids: [CancelID], into acceptance: inout Acceptance<R.Mutation, R.Effect>) {
        if !ids.isEmpty { cancelListed(ids, into: &acceptance) }
        for index in acceptance.jobs.indices where reactor.cancelsInFlight(acceptance.jobs[index].effect) {
            cancelInFlight(before: acceptance.jobs[index], into: &acceptance)
        }
        if !acceptance.cancelled.isEmpty { dropCancelledJobs(from: &acceptance) }
        acceptance.version = version
    }

    /// Rule 1: the open jobs of earlier actions with one of `ids`.
    @usableFromInline
    mutating func cancelListed(_ ids: [CancelID], into acceptance: inout Acceptance<R.Mutation, R.Effect>) {
        let wanted = Set(ids)
        for id in openJobs(before: JobID(actionSeq: acceptance.actionSeq, effectIndex: 0), where: { wanted.contains($0) }) {
            cancelJob(id, into: &acceptance)
        }
    }

    /// Rule 2 for one new job whose effect cancels in flight: the open jobs before it with its
    /// cancel id (nothing if the job itself was cancelled meanwhile).
    @usableFromInline
    mutating func cancelInFlight(before job: Job<R.Effect>, into acceptance: inout Acceptance<R.Mutation, R.Effect>) {
        guard ledger.open[job.id] != nil, let cancelID = reactor.cancelID(for: job.effect) else { return }
        for id in openJobs(before: job.id, where: { $0 == cancelID }) {
            cancelJob(id, into: &acceptance)
        }
    }

    /// The action's new jobs that its own cancellations ended run nowhere.
    @usableFromInline
    func dropCancelledJobs(from acceptance: inout Acceptance<R.Mutation, R.Effect>) {
        let cancelled = Set(acceptance.cancelled)
        acceptance.jobs.removeAll { cancelled.contains($0.id) }
    }

    /// Open jobs older than `limit` whose cancel id satisfies `matches`, in job order.
    private func openJobs(before limit: JobID, where matches: (CancelID) -> Bool) -> [JobID] {
        var found: [JobID] = []
        ledger.effects.forEach { id, effect in
            if id < limit, let cancelID = reactor.cancelID(for: effect), matches(cancelID) { found.append(id) }
        }
        return found.sorted()
    }

    private mutating func cancelJob(_ id: JobID, into acceptance: inout Acceptance<R.Mutation, R.Effect>) {
        guard let effect = ledger.effects[id] else { return }
        for (index, mutation) in reactor.cancelled(effect: effect).enumerated() {
            acceptance.applied.append(reduce(mutation, actionSeq: id.actionSeq, origin: .cancelled(job: id, index: UInt32(index))))
        }
        acceptance.cancelled.append(id)
        guard let next = ledger.close(id, completing: &acceptance.completedActions) else { return }
        var progress = Progress<R.Mutation>(.applied)
        settle(next, into: &progress)
        acceptance.applied += progress.applied
        acceptance.finished += progress.finished
        acceptance.completedActions += progress.completedActions
    }
}
