/// Subscriptions: which runs the state wants, and their events, applied as actions exactly once
/// and in order.
///
/// After every event that changes the state the sequencer works out the reactor's
/// `subscriptions(state:)` again and starts or stops runs; a runtime takes those changes with
/// ``takeSubscriptionChanges()`` and starts or cancels the handlers. Everything here is decided
/// from the sequencer's own inputs, so replaying a journal reproduces the same runs and the same
/// dedup bookkeeping.
extension Sequencer {
    // MARK: Events

    /// Accepts the `index`-th event of subscription run `run` as an action, exactly once and in
    /// index order: a duplicate is dropped, an early event waits for the gap before it, and the
    /// event that fills it is accepted together with its buffered successors.
    ///
    /// An event of a run that has stopped is dropped (disposition `.stale`), as are buffered
    /// events of a run that an accepted event stops.
    ///
    /// - Throws: ``SubscriptionEventError/unknownRun(_:)`` for a run that was never started,
    ///   ``SubscriptionEventError/eventOutOfWindow(run:index:window:)`` for an index too far
    ///   ahead. A refused event changes nothing.
    public mutating func receive(event action: R.Action, index: UInt64, run number: UInt64) throws(SubscriptionEventError)
        -> SubscriptionEventReceipt<R.Mutation, R.Effect> {
        guard let id = subscriptionLedger.ids[number], var run = subscriptionLedger.runs[id] else {
            guard number >= 1, number <= subscriptionLedger.lastRun else { throw .unknownRun(number) }
            return SubscriptionEventReceipt(disposition: .stale)
        }
        if index < run.nextIndex || run.buffered[index] != nil {
            return SubscriptionEventReceipt(disposition: .duplicate)
        }
        guard index - run.nextIndex < UInt64(emitWindow) else {
            throw .eventOutOfWindow(run: number, index: index, window: emitWindow)
        }
        guard index == run.nextIndex else {
            run.buffered[index] = action
            subscriptionLedger.runs[id] = run
            return SubscriptionEventReceipt(disposition: .buffered)
        }
        var receipt = SubscriptionEventReceipt<R.Mutation, R.Effect>(disposition: .applied)
        var next: R.Action? = action
        while let current = next {
            run.nextIndex += 1
            next = run.buffered.removeValue(forKey: run.nextIndex)
            subscriptionLedger.runs[id] = run
            receipt.accepted.append(accept(current))
            // The action may have stopped this run (or replaced it under the same id).
            guard let after = subscriptionLedger.runs[id], after.number == number else { break }
            run = after
        }
        return receipt
    }

    // MARK: Queries

    /// The runs the current state wants, oldest first: what must be running somewhere.
    public var runningSubscriptions: [SubscriptionRun<R.Subscription>] {
        subscriptionLedger.ids.keys.sorted().compactMap { subscriptionRun($0) }
    }

    /// The running run with this number, if any.
    public func subscriptionRun(_ number: UInt64) -> SubscriptionRun<R.Subscription>? {
        guard let id = subscriptionLedger.ids[number], let run = subscriptionLedger.runs[id] else { return nil }
        return describe(run, id: id)
    }

    /// The number of subscription runs the current state wants.
    public var runningSubscriptionCount: Int { subscriptionLedger.runs.count }

    /// Runs started and stopped since the last call, in a form that can be applied directly: a
    /// run that started and stopped in between is in neither list.
    public mutating func takeSubscriptionChanges() -> SubscriptionChanges<R.Subscription> {
        defer { pendingSubscriptionChanges = SubscriptionChanges() }
        return pendingSubscriptionChanges
    }

    // MARK: Internals

    /// Works out the runs of the current state again, if it changed since the last time.
    @inline(__always)
    @inlinable
    mutating func updateSubscriptions() {
        // Kept apart from the work below: in code generic over the reactor, a function looks up
        // the types it uses on entry, and a reactor without subscriptions should not pay that.
        if hasSubscriptions { refreshSubscriptions() }
    }

    /// ``updateSubscriptions()``'s work, for a reactor that has subscriptions.
    @usableFromInline
    mutating func refreshSubscriptions() {
        guard subscriptionLedger.version != version else { return }
        subscriptionLedger.version = version
        let wanted = reactor.subscriptions(state: state)
        if wanted.isEmpty && subscriptionLedger.runs.isEmpty { return }
        var changes = SubscriptionChanges<R.Subscription>()
        var kept: Set<String> = []
        for subscription in wanted {
            let id = reactor.subscriptionID(of: subscription)
            // The first of several descriptions with one id wins.
            guard kept.insert(id).inserted else { continue }
            if let run = subscriptionLedger.runs[id] {
                if run.subscription == subscription { continue }
                stop(id, run, into: &changes)
            }
            let run: SubscriptionLedger<R.Subscription, R.Action>.Run
            if let carried = subscriptionLedger.carried?.removeValue(forKey: id) {
                run = .init(number: carried.number, subscription: subscription, nextIndex: carried.nextIndex)
            } else {
                subscriptionLedger.lastRun += 1
                run = .init(number: subscriptionLedger.lastRun, subscription: subscription)
            }
            subscriptionLedger.runs[id] = run
            subscriptionLedger.ids[run.number] = id
            changes.started.append(describe(run, id: id))
        }
        let gone = subscriptionLedger.runs.filter { !kept.contains($0.key) }.sorted { $0.value.number < $1.value.number }
        for (id, run) in gone { stop(id, run, into: &changes) }
        changes.stopped.sort { $0.run < $1.run }
        pendingSubscriptionChanges.append(changes)
    }

    /// Works out the runs of the current state from scratch (a new sequencer): they are running
    /// from the start, not changes to report.
    mutating func resetSubscriptions() {
        subscriptionLedger = SubscriptionLedger()
        updateSubscriptions()
        pendingSubscriptionChanges = SubscriptionChanges()
    }

    /// Takes a checkpoint's runs, then works out the state's runs again: a no-op for a checkpoint
    /// of the same reactor, and what starts the right runs when the app's release changed what it
    /// subscribes to (or the checkpoint predates subscriptions).
    mutating func restoreSubscriptions(_ restored: SubscriptionLedger<R.Subscription, R.Action>?) {
        subscriptionLedger = restored ?? SubscriptionLedger()
        subscriptionLedger.version = nil
        updateSubscriptions()
        subscriptionLedger.carried = nil
        pendingSubscriptionChanges = SubscriptionChanges()
    }

    private mutating func stop(_ id: String, _ run: SubscriptionLedger<R.Subscription, R.Action>.Run, into changes: inout SubscriptionChanges<R.Subscription>) {
        subscriptionLedger.runs[id] = nil
        subscriptionLedger.ids[run.number] = nil
        changes.stopped.append(describe(run, id: id))
    }

    private func describe(_ run: SubscriptionLedger<R.Subscription, R.Action>.Run, id: String) -> SubscriptionRun<R.Subscription> {
        SubscriptionRun(id: id, run: run.number, subscription: run.subscription, kind: reactor.subscriptionKind(of: run.subscription),
                        lastAppliedEvent: run.nextIndex == 0 ? nil : run.nextIndex - 1)
    }
}
