import ReactorCore
import ZeroMQ

/// Subscription runs on the worker: started on `subscribe`, cancelled on `unsubscribe` and
/// whenever the worker's session ends (the authority then places them again).
extension WorkerLoop {
    /// Tells the authority which subscription kinds this worker runs (after each `ready`).
    func sendSubscriber() throws(ZMQError) {
        guard subscriptionLauncher != nil else { return }
        try send(.subscriber(kinds: configuration.kinds))
    }

    /// The authority hands this worker a run: it replaces any task of the same run.
    func subscribe(run: UInt64, id: String, kind: String, after: UInt64?, payload: [UInt8]) {
        guard let launcher = subscriptionLauncher else {
            logger.warning("subscription \(id) (run \(run)): this worker runs no subscriptions; ignored")
            return
        }
        subscriptionRuns.removeValue(forKey: run)?.task.cancel()
        nextRun &+= 1
        let task = launcher.launch(token: nextRun, run: run, id: id, kind: kind, after: after, payload: payload)
        subscriptionRuns[run] = WorkerSubscriptionRun(token: nextRun, task: task)
        logger.info("subscription \(id) (run \(run), kind \(kind)): started \(after.map { "after event \($0)" } ?? "from the start")")
    }

    /// The authority stops a run.
    func unsubscribe(run: UInt64) {
        guard let entry = subscriptionRuns.removeValue(forKey: run) else { return }
        entry.task.cancel()
        logger.info("subscription run \(run): stopped")
    }

    /// A run's task sent an event; events of cancelled or replaced tasks are dropped.
    func forward(token: UInt64, run: UInt64, index: UInt64, payload: [UInt8]) throws(ZMQError) {
        guard subscriptionRuns[run]?.token == token else { return }
        try send(.event(run: run, index: index, payload: payload))
    }

    /// Cancels every run: the session ended.
    func abandonSubscriptions() {
        for entry in subscriptionRuns.values { entry.task.cancel() }
        subscriptionRuns.removeAll()
    }
}
