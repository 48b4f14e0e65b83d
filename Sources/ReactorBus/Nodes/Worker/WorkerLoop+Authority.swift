import ReactorCore
import ReactorWire
import ZeroMQ

/// Messages from the authority: registration, jobs, heartbeats and errors.
extension WorkerLoop {
    /// Reads what the socket holds (a bounded batch) and handles each message.
    func receiveAvailable(_ batch: ReceiveBatch) throws(ZMQError) {
        var batch = batch
        while let frames = try batch.next() {
            // Any message, even a malformed one, shows the authority is alive.
            lastHeard = MonotonicClock.milliseconds()
            tally.bytesReceived += Self.bytes(of: frames)
            let message: AuthorityToWorker
            do {
                message = try AuthorityToWorker(frames: frames, jobs: &spareJobs)
            } catch {
                metrics.update { $0.malformedMessages += 1 }
                logger.warning("ignoring a malformed message from the authority (\(frames.count) frame\(frames.count == 1 ? "" : "s")): \(error)")
                continue
            }
            try handle(message)
            // The batch's array, for the next batch to read into.
            if case .jobs(let entries) = consume message { spareJobs = entries }
            // A failover replaced the socket: what the old one held is not read.
            if batch.socket !== socket { return }
        }
    }

    private func handle(_ message: AuthorityToWorker) throws(ZMQError) {
        switch message {
        case .welcome(let interval, _):
            if case .older(let term, let highest) = terms.check(AuthorityTermWatch.term(of: message)) {
                logger.warning("the authority at \(endpoints.current) answers from term \(term), older than term \(highest) seen before")
                if endpoints.isList {
                    try failOver(because: "(term \(term) is older than \(highest))")
                    return
                }
            }
            if interval > 0 { heartbeatMilliseconds = interval }
            readySentAt = nil
            metrics.update { $0.isRegistered = true }
            logger.info("registered with the authority at \(endpoints.current) (heartbeat every \(heartbeatMilliseconds) ms)")
        case .job(let job, let kind, let payload):
            try accept(job, kind: kind, payload: payload)
        case .jobs(let entries):
            for entry in entries { try accept(entry.job, kind: entry.kind, payload: entry.payload) }
        case .heartbeat(let features):
            authorityReadsDoneWithEmit = features.contains(AuthorityFeature.doneWithEmit)
            authorityReadsReportBatches = features.contains(AuthorityFeature.reportBatches)
            if !toldFeatures, features.contains(AuthorityFeature.jobBatches) {
                // Only to an authority that reads it: an older one would refuse the kind.
                toldFeatures = true
                try send(.features(WorkerFeature.all, maxMessageBytes: UInt64(configuration.maxMessageBytes)))
            }
        case .cancel(let job):
            cancel(job)
        case .subscribe(let run, let id, let kind, let after, let payload):
            subscribe(run: run, id: id, kind: kind, after: after, payload: payload)
        case .unsubscribe(let run):
            unsubscribe(run: run)
        case .error(let ref, let code, let text):
            try handleError(ref: ref, code: code, message: text)
        }
    }

    private func handleError(ref: UInt64, code: ErrorCode, message text: String) throws(ZMQError) {
        switch code {
        case .unknownWorker:
            // Messages sent before our `ready` was handled may still come back as unknown;
            // those say nothing new. Once `welcome` came (or `ready` has gone unanswered for
            // as long as the authority may be silent), it means the authority lost us.
            let now = MonotonicClock.milliseconds()
            if let sentAt = readySentAt,
               Self.elapsed(since: sentAt, now: now) < heartbeatMilliseconds * UInt64(configuration.missedHeartbeats) {
                logger.debug("unknown_worker before welcome (ref \(ref)); ready is on its way")
                return
            }
            logger.warning("the authority does not know this worker (it restarted?); registering again\(running.isEmpty ? "" : " and cancelling \(running.count) running job\(running.count == 1 ? "" : "s")")")
            // The authority re-dispatches what it had given us; our old runs would report to
            // a session that no longer exists.
            abandonAll()
            unsent.removeAll()
            metrics.update { $0.isRegistered = false }
            try sendReady()
        case .wrongApp:
            logger.error("the authority serves another app than '\(configuration.appName)': \(text); the worker stops")
            failure.record(ProtocolError(.wrongApp, text))
            fatal = true
        default:
            logger.warning("the authority reported \(code.rawValue) (ref \(ref)): \(text)")
        }
    }
}
