import ReactorCore
import ZeroMQ

/// Starting, queueing and abandoning jobs, and sending what their tasks report.
///
/// The worker announces `concurrency + prefetch` as its capacity: a job that finds every slot
/// busy waits in its queue (``WorkerJobQueue``) and starts when one frees. Capacity guard: the
/// authority never sends more than that at once, but if it does (a bug, or a race with a
/// re-registration) the queue takes up to `concurrency` more, with a warning. Past that a job
/// is answered with `failed` "worker over capacity", so a misbehaving authority cannot make the
/// worker hoard work.
extension WorkerLoop {
    /// A job arrived from the authority.
    func accept(_ job: JobID, kind: String, payload: [UInt8]) throws(ZMQError) {
        tally.jobsReceived += 1
        // The authority gave us the same job again (it had written us off): its emits from the
        // old run may have been dropped, so only a run from the start is complete, and the old
        // run reports nothing (while stopping too: `bye` then hands the job back).
        let previous = running.removeValue(forKey: job)
        previous?.effect.cancel()
        queued.remove(job)
        // `stop()` may have come in the same turn as this job, before the drain began.
        if drainDeadline != nil || runtime.isStopping {
            // Not started and never reported: `bye` hands it straight back to the authority.
            metrics.update { $0.jobsDeclined += 1 }
            logger.debug("job \(job): declined, the worker is stopping\(previous == nil ? "" : " (its earlier run cancelled)")")
            if previous != nil { tally.countsChanged = true }
            return
        }
        if previous != nil { logger.debug("job \(job): sent again; restarting it") }
        let prefetch = configuration.prefetchedJobs
        if running.count < configuration.concurrency {
            start(WorkerQueuedJob(job: job, kind: kind, payload: payload))
        } else if queued.count < prefetch + configuration.concurrency {
            if queued.count >= prefetch {
                logger.warning("job \(job): \(running.count) jobs already run and \(queued.count) wait (capacity \(configuration.capacity)); queued")
            }
            queued.append(WorkerQueuedJob(job: job, kind: kind, payload: payload))
        } else {
            let failure = EffectFailure(message: "worker over capacity", attempts: 0)
            metrics.update { $0.jobsFailed += 1 }
            logger.warning("job \(job): refused, \(running.count) running and \(queued.count) queued (capacity \(configuration.capacity))")
            try send(.failed(job: job, failure: failure))
        }
        tally.countsChanged = true
    }

    /// Starts a job's task.
    private func start(_ job: WorkerQueuedJob) {
        nextRun &+= 1
        let effect = launcher.launch(run: nextRun, job: job.job, kind: job.kind, payload: job.payload)
        running[job.job] = WorkerRunningJob(run: nextRun, effect: effect)
        logger.debug("job \(job.job): started (kind \(job.kind))")
    }

    /// Starts queued jobs while there are free slots.
    func startQueued() {
        while running.count < configuration.concurrency, drainDeadline == nil, let next = queued.popFirst() {
            start(next)
        }
    }

    /// A running job's task reported something; stale reports of abandoned runs are dropped.
    /// Its counters go to the turn's tally, which the end of the turn adds to the metrics.
    func handle(_ event: WorkerJobEvent) throws(ZMQError) {
        switch event {
        case .emit(let run, let job, let emitIndex, let payload):
            guard running[job]?.run == run else { return }
            tally.mutationsEmitted += 1
            guard authorityReadsDoneWithEmit else {
                try report(.emit(job: job, emitIndex: emitIndex, payload: payload))
                return
            }
            if let earlier = reports.emit(job, run: run, emitIndex: emitIndex, payload: payload) { try report(earlier) }
        case .finished(let run, let job, let outcome, let nanoseconds):
            guard running[job]?.run == run else { return }
            running[job] = nil
            let ending = reports.end(job, outcome: outcome)
            if let emit = ending.emit { try report(emit) }
            if case .doneWithEmit = ending.report { tally.combinedReports += 1 }
            try report(ending.report)
            switch outcome {
            case .done(let emitCount):
                tally.jobsDone += 1
                tally.effectNanoseconds.append(nanoseconds)
                logger.debug("job \(job): done, \(emitCount) mutation\(emitCount == 1 ? "" : "s")")
            case .failed(let failure):
                tally.jobsFailed += 1
                tally.effectNanoseconds.append(nanoseconds)
                logger.warning("job \(job): failed: \(failure)")
            }
            startQueued()
            tally.countsChanged = true
        case .subscriptionEvent(let token, let run, let index, let payload):
            try forward(token: token, run: run, index: index, payload: payload)
        }
    }

    /// Ends the batch of job events just handled: sends the emits still held, of the jobs
    /// still running in the same run.
    func closeReportBatch() throws(ZMQError) {
        guard !reports.isEmpty else { return }
        for message in reports.close(isCurrent: { running[$0]?.run == $1 }) { try report(message) }
    }

    /// Cancels every running job and forgets the queued ones, without reporting any of them:
    /// the authority re-dispatches them (after `bye`, a new `ready`, or missed heartbeats).
    func abandonAll() {
        reports.discard()
        // Reports of the abandoned runs, to a session that is over.
        pendingReports.removeAll()
        pendingReportBytes = 0
        abandonSubscriptions()
        guard !running.isEmpty || !queued.isEmpty else { return }
        for entry in running.values { entry.effect.cancel() }
        running.removeAll()
        queued.removeAll()
        publishCounts()
    }

    /// Copies the running and queued counts into the metrics.
    func publishCounts() {
        let running = running.count, queued = queued.count
        metrics.update {
            $0.running = running
            $0.queued = queued
        }
    }
}
