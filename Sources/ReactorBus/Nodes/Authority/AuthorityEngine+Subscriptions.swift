import ReactorCore
import ReactorWire

/// Subscriptions in the distributed runtime: the sequencer decides which runs exist (from the
/// state), the engine places each on a worker that serves its kind, moves it when that worker is
/// lost, and applies the events workers send as actions, journaled like emits.
extension AuthorityEngine {
    /// Runs the state wants that no worker runs now.
    var unassignedSubscriptionCount: Int {
        guard inSequencer({ $0.runningSubscriptionCount }) > 0 else { return 0 }
        return sequencer.runningSubscriptions.count { subscriptionPlacement.owners[$0.run] == nil }
    }

    /// A worker said it runs subscriptions of `kinds` (empty: every kind).
    func handleSubscriber(_ peer: PeerID, kinds: [String]) {
        subscriptionPlacement.serve(peer, kinds: kinds)
        logger.info("worker \(workerLabel(peer)) runs subscriptions of \(kinds.isEmpty ? "every kind" : "kinds " + kinds.joined(separator: ","))")
    }

    /// One event of a subscription run, from the worker that runs it.
    func handleSubscriptionEvent(_ peer: PeerID, run: UInt64, index: UInt64, payload: [UInt8], now: UInt64) {
        guard subscriptionPlacement.owners[run] == peer else {
            // A run taken from this worker (or stopped): its replacement resumes from the ledger.
            metrics[.subscriptionEventsStale] += 1
            return
        }
        guard let action = try? decoder.decode(R.Action.self, from: payload) else {
            metrics[.subscriptionEventsRefused] += 1
            toWorker(peer, .error(ref: run, code: .malformed, message: "event \(index) of subscription run \(run) is not a \(configuration.appName) action"))
            return
        }
        let receipt: SubscriptionEventReceipt<R.Mutation, R.Effect>
        do {
            receipt = try sequencer.receive(event: action, index: index, run: run)
        } catch {
            metrics[.subscriptionEventsRefused] += 1
            logger.debug("refused subscription event from \(workerLabel(peer)): \(error)")
            return
        }
        switch receipt.disposition {
        case .duplicate:
            metrics[.subscriptionEventsDuplicate] += 1
            return
        case .stale:
            metrics[.subscriptionEventsStale] += 1
            return
        case .applied, .buffered:
            break
        }
        if isJournaling { outbox.records.append(.subscriptionEvent(run: run, index: index, action: payload)) }
        absorb(receipt.accepted, dispatchAt: now)
    }

    /// Re-applies a journaled subscription event (no dispatch).
    func replaySubscriptionEvent(run: UInt64, index: UInt64, payload: [UInt8]) throws {
        let action = try decoder.decode(R.Action.self, from: payload)
        absorb(try sequencer.receive(event: action, index: index, run: run).accepted, dispatchAt: nil)
        _ = sequencer.takeSubscriptionChanges()
    }

    /// Counts and publishes the actions that subscription events became; stops the jobs they
    /// cancelled and ends the actions those jobs were the last of, as for a client's action;
    /// dispatches their jobs (unless replaying: recovery dispatches every unreported job at the end).
    private func absorb(_ accepted: [Acceptance<R.Mutation, R.Effect>], dispatchAt now: UInt64?) {
        for acceptance in accepted {
            metrics[.subscriptionEventsApplied] += 1
            let cancels = !acceptance.cancelled.isEmpty || !acceptance.completedActions.isEmpty
            countSyncAcceptance(acceptance, byOrigin: cancels)
            // A replay has no dispatcher work to undo; it ends the actions at time 0, as a
            // replayed client action does.
            if cancels { absorbCancellations(acceptance, now: now ?? 0) }
            if let now { enqueueJobs(of: acceptance, now: now) }
        }
    }

    /// Makes the workers run exactly the runs the state wants: stops runs that left it, moves
    /// runs whose worker was lost or quarantined, and places runs that have no worker yet.
    /// Called once per batch (when the outbox is taken), so a run that starts and stops within
    /// one batch never reaches a worker.
    func placeSubscriptions() {
        // Where the sequencer is stored (see `inSequencer`): through the stored value, each call
        // copied the whole sequencer, every turn.
        _ = inSequencer { $0.takeSubscriptionChanges() }
        for peer in subscriptionPlacement.subscribers.keys where !dispatcher.knows(peer) {
            subscriptionPlacement.forget(peer)
        }
        // Nothing wanted and nothing placed, the case of every batch of an app without
        // subscriptions: checked before the wanted runs are listed (sorted, in arrays of the
        // app's types), which cost a batch of one action a few microseconds of cold code.
        guard inSequencer({ $0.runningSubscriptionCount }) > 0 || !subscriptionPlacement.owners.isEmpty || !subscriptionPlacement.orphaned.isEmpty else { return }
        let wanted = sequencer.runningSubscriptions
        let wantedRuns = Set(wanted.map(\.run))
        for (run, peer) in subscriptionPlacement.owners where !wantedRuns.contains(run) {
            subscriptionPlacement.release(run)
            toWorker(peer, .unsubscribe(run: run))
        }
        subscriptionPlacement.keepOrphans(wantedRuns)
        for run in wanted {
            if let owner = subscriptionPlacement.owners[run.run] {
                guard dispatcher.isQuarantined(owner) else { continue }
                subscriptionPlacement.orphan(run.run)
                toWorker(owner, .unsubscribe(run: run.run))
            }
            guard let peer = subscriptionPlacement.pick(kind: run.kind, excluding: { dispatcher.isQuarantined($0) }) else { continue }
            guard let payload = encode(run.subscription) else { continue }
            let restart = subscriptionPlacement.adopt(run.run)
            subscriptionPlacement.assign(run.run, to: peer)
            metrics[.subscriptionsAssigned] += 1
            if restart { metrics[.subscriptionRestarts] += 1 }
            let resume = run.lastAppliedEvent.map { "after event \($0)" } ?? "from the start"
            logger.info("subscription \(run.id) (run \(run.run), kind \(run.kind)) \(restart ? "moves" : "goes") to worker \(workerLabel(peer)), \(resume)")
            toWorker(peer, .subscribe(run: run.run, id: run.id, kind: run.kind, after: run.lastAppliedEvent, payload: payload))
        }
    }
}
