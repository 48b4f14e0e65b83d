extension Sequencer {
    /// Whether nothing was accepted or applied yet: a fresh state, which ``start()`` prepends to.
    ///
    /// Decided from the sequencer's own journaled facts, so a restart that replays or restores
    /// a started state never counts as fresh again.
    public var isFresh: Bool { version == 0 && actionSeq == 0 }

    /// Applies the reactor's ``Reactor/initialMutations`` and then its ``Reactor/initialActions``
    /// (not passed through `transform(action:)`), once, on a fresh state.
    ///
    /// The whole prelude is one accepted action: it takes `actionSeq` 1, its mutations are its
    /// sync mutations in that order (initial mutations first), and its jobs are the initial
    /// actions' effects in order. Returns `nil`, changing nothing, when the state is not fresh or
    /// the reactor declares no initial actions or mutations, so a runtime can call it after
    /// every recovery and journal a record only when it returns a value.
    public mutating func start() -> Acceptance<R.Mutation, R.Effect>? {
        guard isFresh else { return nil }
        let mutations = reactor.initialMutations
        let actions = reactor.initialActions
        guard !mutations.isEmpty || !actions.isEmpty else { return nil }
        storedActionSeq += 1
        let seq = storedActionSeq
        var applied: [AppliedMutation<R.Mutation>] = []
        for mutation in mutations {
            applied.append(reduce(mutation, actionSeq: seq, origin: .sync(index: UInt32(applied.count))))
        }
        let mutated = mutateAll(actions, actionSeq: seq, applied: &applied)
        var acceptance = Acceptance(actionSeq: seq, version: version, applied: applied, jobs: issueJobs(actionSeq: seq, effects: mutated.async))
        if !mutated.cancel.isEmpty || !acceptance.jobs.isEmpty { cancel(mutated.cancel, into: &acceptance) }
        updateSubscriptions()
        return acceptance
    }

    /// Mutates each action `transform(action:)` makes of `action` against the state its
    /// predecessors' sync mutations left, applying those sync mutations as it goes (numbered
    /// across the whole expansion); returns the effects and cancellations of all of them, in order, with `sync`
    /// emptied (already applied). One incoming action keeps one `actionSeq` however many
    /// actions it expands to, so its ack and its job identities stay those of one action.
    @inlinable
    mutating func mutateTransformed(_ action: R.Action, actionSeq seq: UInt64, applied: inout [AppliedMutation<R.Mutation>]) -> Mutations<R.Mutation, R.Effect> {
        let actions = reactor.transform(action: action)
        if actions.count == 1, let only = actions.first {
            var mutations = reactor.mutate(state: storedState, action: only)
            applied.reserveCapacity(mutations.sync.count)
            // A counted range, not `enumerated()` or `indices`: in code generic over the reactor,
            // the type of each enumerated sequence, and the collection `indices` is asked of,
            // is looked up at run time, once per action.
            for index in 0 ..< mutations.sync.count {
                applied.append(reduce(mutations.sync[index], actionSeq: seq, origin: .sync(index: UInt32(index))))
            }
            mutations.sync = []
            return mutations
        }
        return mutateAll(actions, actionSeq: seq, applied: &applied)
    }

    /// Mutates `actions` in order as parts of action `seq`, applying each one's sync mutations
    /// before the next is mutated; returns their effects and cancellations, in order.
    @usableFromInline
    mutating func mutateAll(_ actions: [R.Action], actionSeq seq: UInt64,
                                    applied: inout [AppliedMutation<R.Mutation>]) -> Mutations<R.Mutation, R.Effect> {
        var all = Mutations<R.Mutation, R.Effect>.none
        for each in actions {
            let mutations = reactor.mutate(state: storedState, action: each)
            for mutation in mutations.sync {
                applied.append(reduce(mutation, actionSeq: seq, origin: .sync(index: UInt32(applied.count))))
            }
            all.async += mutations.async
            all.cancel += mutations.cancel
        }
        return all
    }

    /// Opens one job per effect of action `seq` in the ledger and returns them.
    @inlinable
    mutating func issueJobs(actionSeq seq: UInt64, effects: [R.Effect]) -> [Job<R.Effect>] {
        // Apart from the work: most actions have no effect, and a generic function looks up the
        // types it uses on entry.
        effects.isEmpty ? [] : openJobs(actionSeq: seq, effects: effects)
    }

    /// ``issueJobs(actionSeq:effects:)``'s work, for an action with effects.
    @inlinable
    mutating func openJobs(actionSeq seq: UInt64, effects: [R.Effect]) -> [Job<R.Effect>] {
        var jobs: [Job<R.Effect>] = []
        jobs.reserveCapacity(effects.count)
        for index in 0 ..< effects.count {
            let effect = effects[index]
            let id = JobID(actionSeq: seq, effectIndex: UInt32(index))
            jobs.append(Job(id: id, effect: effect, kind: kindMemo.kind(of: effect, in: reactor), lane: reactor.lane(for: effect)))
        }
        ledger.open(actionSeq: seq, jobs: jobs)
        return jobs
    }
}
