import ReactorMetrics

extension AuthorityMetrics {
    /// The authority's metrics as Prometheus families (`reactorbus_...`), every series labelled
    /// with `labels` first (`app` and `node` from the CLI).
    ///
    /// Counters end in `_total`; refusals, mutations and socket bytes are one family each with a
    /// label (`reason`, `origin`, `socket`) rather than one per value; durations are in seconds.
    /// README, "Observability", lists them.
    public func metricFamilies(labels: MetricLabels) -> [MetricFamily] {
        func counter(_ name: String, _ help: String, _ counter: AuthorityCounter) -> MetricFamily {
            .counter("reactorbus_\(name)_total", help, labels: labels, self[counter])
        }
        func counters(_ name: String, _ help: String, by label: String, _ values: [(String, AuthorityCounter)]) -> MetricFamily {
            MetricFamily(name: "reactorbus_\(name)_total", help: help, kind: .counter, samples: values.map {
                MetricSample(labels: labels.adding(label, $0.0), value: .number(Double(self[$0.1])))
            })
        }
        func gauge(_ name: String, _ help: String, _ value: UInt64) -> MetricFamily {
            .gauge("reactorbus_\(name)", help, labels: labels, Double(value))
        }
        func histogram(_ name: String, _ help: String, _ value: Histogram) -> MetricFamily {
            .histogram("reactorbus_\(name)", help, labels: labels, value)
        }
        return [
            counter("actions_accepted", "Actions accepted: each got a new action_seq.", .actionsAccepted),
            counter("actions_applied", "Actions whose mutations are all applied: the sync ones at once, and those of every effect once its job is done or failed.", .actionsApplied),
            counter("actions_duplicate", "Resends of accepted actions, acked again, nothing applied.", .actionsDuplicate),
            counters("actions_refused", "Actions refused, by the error code they were answered with.", by: "reason", [
                ("busy", .actionsBusy), ("stale", .actionsStale), ("conflict", .actionsConflict),
                ("unknown_client", .actionsUnknownClient), ("bad_action", .badActions),
            ]),
            counter("acks", "Acks sent, for new actions and resends.", .acks),
            counter("ack_batches", "Acks messages sent: the acks a turn owes one client that reads them, in one message.", .ackBatches),
            counters("mutations_applied", "Mutations applied, by origin: an action's own (sync), emitted by an effect (async), the failure hook's (failure), or the cancel hook's (cancelled).", by: "origin", [
                ("sync", .mutationsSync), ("async", .mutationsAsync), ("failure", .mutationsFailure), ("cancelled", .mutationsCancel),
            ]),
            counter("jobs_dispatched", "Jobs sent to workers, re-dispatches included.", .jobsDispatched),
            counter("jobs_done", "Jobs reported done by their worker.", .jobsDone),
            counter("jobs_failed", "Jobs that failed for good (failed reports, and done reports short of mutations).", .jobsFailed),
            counter("jobs_redispatched", "Jobs taken back from a worker (dead, timed out, quarantined, bye) to go to another.", .jobsRedispatched),
            counter("jobs_timed_out", "Jobs taken back because they ran longer than the job timeout.", .jobsTimedOut),
            counter("jobs_cancelled", "Jobs cancelled by an action (a cancel id, or a new effect cancelling in flight).", .jobsCancelled),
            counter("cancelled_results_dropped", "Emit, done and failed reports for jobs cancelled while their worker held them, dropped.", .cancelledResultsDropped),
            counter("emits_duplicate", "Emits of a mutation already applied, dropped.", .emitsDuplicate),
            counter("emits_buffered", "Emits that arrived ahead of an earlier one and waited for it.", .emitsBuffered),
            counters("messages_refused", "Messages answered with an error or dropped, by reason.", by: "reason", [
                ("malformed", .malformed), ("unsupported_version", .unsupportedVersion), ("unknown_kind", .unknownKind),
                ("bad_mutation", .badMutations), ("foreign_report", .foreignReports), ("unknown_job", .unknownJobs),
                ("unknown_worker", .unknownWorkerMessages), ("wrong_app", .wrongApp), ("incomplete_report", .incompleteReports),
                ("too_large", .messagesTooLarge),
            ]),
            counter("workers_registered", "Ready messages accepted, re-registrations included.", .workersRegistered),
            counter("workers_lost", "Workers declared dead after missed heartbeats.", .workersLost),
            counter("workers_quarantined", "Quarantines of workers whose jobs kept timing out.", .workersQuarantined),
            counter("workers_recovered", "Quarantined workers that finished a probation job in time.", .workersRecovered),
            counter("worker_capacities_clamped", "Ready messages announcing more than the most jobs a worker is given.", .capacitiesClamped),
            counter("replies_refused", "Snapshot and stats requests answered busy: their client had too many reply bytes unread.", .repliesRefusedBytes),
            counter("snapshot_requests", "Snapshot requests answered.", .snapshotRequests),
            counter("snapshot_chunks", "Snapshot chunk requests answered with a chunk.", .snapshotChunks),
            counter("state_encodes_on_loop", "Whole encodings of the state made on the authority's loop (a small state).", .stateEncodesOnLoop),
            counter("state_encodes_off_loop", "Whole encodings of the state made off the loop from a copy of its state.", .stateEncodesOffLoop),
            counter("state_encodes_by_replica", "Whole encodings of the state made by the snapshot replica.", .stateEncodesByReplica),
            counter("snapshots_published", "Snapshots published on the feed.", .snapshotsPublished),
            counter("journal_records", "Records appended to the journal.", .journalRecords),
            counter("journal_commits", "Journal commits.", .journalCommits),
            counter("journal_bytes", "Journal record bytes written.", .journalBytes),
            counter("journal_fsyncs", "fsync and fdatasync calls on the journal.", .journalFsyncs),
            counter("snapshots_written", "Snapshots written to the data directory.", .snapshotsWritten),
            counter("snapshot_written_bytes", "Bytes of the snapshots written to the data directory.", .snapshotBytesWritten),
            counter("handshakes_refused", "CURVE handshakes refused on any socket.", .handshakesRefused),
            counter("subscriptions_assigned", "Subscription runs handed to a worker, restarts included.", .subscriptionsAssigned),
            counter("subscription_restarts", "Subscription runs taken from a lost worker to go to another, resuming after the last applied event.", .subscriptionRestarts),
            counter("subscription_events_applied", "Subscription events accepted as actions.", .subscriptionEventsApplied),
            counters("subscription_events_dropped", "Subscription events dropped or refused, by reason.", by: "reason", [
                ("duplicate", .subscriptionEventsDuplicate), ("stale", .subscriptionEventsStale), ("refused", .subscriptionEventsRefused),
            ]),
            counters("socket_received_bytes", "Bytes of the frames read from each socket.", by: "socket", [
                ("actions", .actionsBytesReceived), ("workers", .workersBytesReceived),
            ]),
            counters("socket_sent_bytes", "Bytes of the frames handed to each socket.", by: "socket", [
                ("actions", .actionsBytesSent), ("workers", .workersBytesSent), ("feed", .feedBytesSent),
            ]),
            counter("replication_records_sent", "Journal records streamed to standbys.", .replicationRecordsSent),
            counter("replication_sent_bytes", "Bytes of journal records and snapshot chunks streamed to standbys.", .replicationBytesSent),
            gauge("state_version", "The state's version: mutations applied since the start of history.", version),
            gauge("action_seq", "The last accepted action's action_seq.", actionSeq),
            gauge("open_jobs", "Jobs not finished.", openJobs),
            gauge("queued_jobs", "Jobs waiting for a worker.", queuedJobs),
            gauge("workers", "Workers registered.", workers),
            gauge("quarantined_workers", "Workers in quarantine.", quarantinedWorkers),
            gauge("observers", "TCP and IPC connections to the feed (observers and other subscribers).", observers),
            gauge("clients", "Clients the idempotent-retry ledger remembers.", clients),
            gauge("clients_forgotten", "Forgotten clients whose tombstone is kept.", forgottenClients),
            gauge("feed_high_water_mark", "The feed's high-water mark, in messages per subscriber.", feedHighWaterMark),
            gauge("snapshot_bytes", "The size of the newest snapshot written to the data directory.", snapshotBytes),
            gauge("state_bytes", "The size of the state's last whole encoding (a fetch, a snapshot reply, the feed's snapshot).", stateBytes),
            gauge("snapshot_replica", "1 while a snapshot replica writes the snapshots, else 0.", snapshotReplica),
            gauge("snapshot_replica_backlog_bytes", "Bytes of journal records the snapshot replica has yet to apply.", snapshotReplicaBacklogBytes),
            gauge("subscriptions_running", "Subscription runs the state wants.", subscriptionsRunning),
            gauge("subscriptions_unassigned", "Subscription runs waiting for a worker that serves their kind.", subscriptionsUnassigned),
            gauge("standbys", "Standbys following this primary.", standbys),
            gauge("replication_lag_records", "Journal records the best standby has not reported durable.", replicationLag),
            gauge("journal_lsn", "The last journal record committed (its LSN).", journalLSN),
            histogram("ack_latency_seconds", "From the start of the loop turn that read an action to its ack handed to ZeroMQ, journal commit included.", ackLatency),
            histogram("journal_fsync_seconds", "Time one journal commit spent in fsync or fdatasync.", journalFsyncLatency),
            histogram("snapshot_write_seconds", "Time a snapshot took to encode, write, fsync and rename, off the loop.", snapshotWriteDuration),
            histogram("state_encode_seconds", "Time one encoding of the whole state took, for a fetch, a snapshot reply or the feed, on the loop or off it.", stateEncodeDuration),
        ]
    }
}
