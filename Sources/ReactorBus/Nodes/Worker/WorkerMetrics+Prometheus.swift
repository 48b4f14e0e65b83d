import ReactorMetrics

extension WorkerMetrics {
    /// The worker's metrics as Prometheus families (`reactorbus_worker_...`, and the socket
    /// bytes as `reactorbus_socket_..._bytes_total{socket="authority"}`), every series labelled
    /// with `labels` first (`app` and `node` from the CLI).
    public func metricFamilies(labels: MetricLabels) -> [MetricFamily] {
        func counter(_ name: String, _ help: String, _ value: UInt64) -> MetricFamily {
            .counter("reactorbus_worker_\(name)_total", help, labels: labels, value)
        }
        func gauge(_ name: String, _ help: String, _ value: Int) -> MetricFamily {
            .gauge("reactorbus_worker_\(name)", help, labels: labels, Double(value))
        }
        let socket = labels.adding("socket", "authority")
        return [
            counter("jobs_received", "Jobs the authority sent, started or not.", jobsReceived),
            counter("jobs_done", "Jobs reported done.", jobsDone),
            counter("jobs_failed", "Jobs reported failed (effect errors, undecodable effects, over capacity).", jobsFailed),
            counter("jobs_declined", "Jobs received while stopping, never started, handed back with bye.", jobsDeclined),
            counter("jobs_cancelled", "Jobs the authority cancelled while they ran or waited here.", jobsCancelled),
            counter("mutations_emitted", "Mutations sent, in emit messages or as a job's last one inside its done.", mutationsEmitted),
            counter("combined_reports", "Done messages that carried the job's last mutation: an emit and a done in one message.", combinedReports),
            counter("reconnects", "New connections after the authority went silent.", reconnects),
            counter("failovers", "Moves to the next of several authority endpoints after the current one went silent.", failovers),
            counter("registrations", "Ready messages sent.", registrations),
            counter("malformed_messages", "Messages from the authority that did not follow the protocol, dropped.", malformedMessages),
            .counter("reactorbus_socket_received_bytes_total", "Bytes of the frames read from each socket.", labels: socket, bytesReceived),
            .counter("reactorbus_socket_sent_bytes_total", "Bytes of the frames handed to each socket.", labels: socket, bytesSent),
            gauge("running_effects", "Effects running now.", running),
            gauge("queued_jobs", "Jobs waiting for a free slot.", queued),
            gauge("registered", "1 while the authority has welcomed this worker and not gone silent since, else 0.", isRegistered ? 1 : 0),
            gauge("effects_on_loop_thread", "1 while effects run on the worker's loop thread, 0 on the shared pool.", effectsOnLoopThread ? 1 : 0),
            .histogram("reactorbus_worker_effect_duration_seconds", "How long jobs ran, from start to report, every attempt included.", labels: labels, effectDuration),
        ]
    }
}
