import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorMetrics
import ReactorWire
import Testing

/// What the engine counts for the metrics endpoint beyond the `stats` of old: actions fully
/// applied, acks, mutations by origin, job timeouts, and what the loop reports.
@Suite struct AuthorityEngineMetricsTests {
    let writer = HeaderWriter()
    let client: [UInt8] = [0, 1, 2, 3]
    let worker = PeerID([9, 9])

    func makeEngine(jobTimeout: Duration = .seconds(60)) -> AuthorityEngine<Counter> {
        var configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        configuration.jobTimeout = jobTimeout
        configuration.heartbeatInterval = .seconds(100)
        return AuthorityEngine(reactor: Counter(), configuration: configuration, logger: Logger(label: "test", sink: .discard), journaling: false)
    }

    func action(_ action: Counter.Action, seq: UInt64) throws -> [[UInt8]] {
        [client] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(action)).frames(writer)
    }

    func fromWorker(_ message: WorkerMessage) -> [[UInt8]] { [worker.bytes] + message.frames(writer) }

    @Test func anActionCountsAsAppliedOnceItsLastMutationIsAppliedAndAcksAreCountedInTheOutbox() throws {
        let engine = makeEngine()
        engine.handleWorker(fromWorker(.ready(name: "w", app: "counter", capacity: 4, kinds: [])), now: 0)
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 2), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 3), now: 0)
        engine.handleClient(try action(.countUp, seq: 1), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        var outbox = engine.takeOutbox()
        // Three new actions and one resend acked; the conflicting resend is an error, not an ack.
        #expect(outbox.acks == 4)
        #expect(outbox.replies.count == 5)
        #expect(engine.metrics[.actionsAccepted] == 3)
        #expect(engine.metrics[.actionsApplied] == 1)

        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        let first = JobID(actionSeq: 2, effectIndex: 0)
        engine.handleWorker(fromWorker(.emit(job: first, emitIndex: 0, payload: increase)), now: 1)
        #expect(engine.metrics[.actionsApplied] == 1)
        engine.handleWorker(fromWorker(.done(job: first, emitCount: 1)), now: 1)
        #expect(engine.metrics[.actionsApplied] == 2)
        engine.handleWorker(fromWorker(.failed(job: JobID(actionSeq: 3, effectIndex: 0), failure: EffectFailure(message: "no", attempts: 3))), now: 2)
        #expect(engine.metrics[.actionsApplied] == 3)
        outbox = engine.takeOutbox()
        #expect(outbox.acks == 0)

        let metrics = engine.currentMetrics()
        #expect(metrics[.mutationsSync] == 1)
        #expect(metrics[.mutationsAsync] == 1)
        #expect(metrics[.mutationsFailure] == 0)
        #expect(metrics[.mutationsApplied] == 2)
        #expect(metrics[.jobsDone] == 1)
        #expect(metrics[.jobsFailed] == 1)
        #expect(metrics[.actionsDuplicate] == 1)
        #expect(metrics[.actionsConflict] == 1)
    }

    @Test func jobsTakenBackForTheirTimeoutAreCountedApartFromOtherRedispatches() throws {
        let engine = makeEngine(jobTimeout: .milliseconds(100))
        engine.handleWorker(fromWorker(.ready(name: "w", app: "counter", capacity: 4, kinds: [])), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 1), now: 0)
        engine.handleClient(try action(.countUpAsync, seq: 2), now: 0)
        engine.handleWorker(fromWorker(.heartbeat), now: 150)
        engine.tick(now: 150, sendHeartbeats: false)
        #expect(engine.metrics[.jobsTimedOut] == 2)
        #expect(engine.metrics[.jobsRedispatched] == 2)
        engine.handleWorker(fromWorker(.bye), now: 160)
        #expect(engine.metrics[.jobsTimedOut] == 2)
    }

    @Test func theEngineCountsBytesSyncsSnapshotsObserversAndLatenciesTheLoopReports() throws {
        let engine = makeEngine()
        var report = AuthorityLoopReport()
        report.acks = 3
        report.ackLatency.observe(0.0002, times: 3)
        report.actionsBytesReceived = 10
        report.actionsBytesSent = 11
        report.workersBytesReceived = 12
        report.workersBytesSent = 13
        report.feedBytesSent = 14
        report.journalBytes = 15
        report.journalFsyncs = 2
        report.journalFsyncLatency.observe(0.004)
        report.snapshotBytesWritten = 300
        report.lastSnapshotBytes = 300
        report.snapshotWriteDuration.observe(0.02)
        report.observers = 2
        var later = AuthorityLoopReport()
        later.acks = 1
        later.ackLatency.observe(0.003)
        later.snapshotBytesWritten = 200
        later.lastSnapshotBytes = 200
        later.observers = 1
        report.merge(later)
        engine.absorb(report)
        engine.absorb(AuthorityLoopReport())
        let metrics = engine.currentMetrics()
        #expect(metrics[.acks] == 4)
        #expect(metrics.ackLatency.count == 4)
        #expect(metrics.ackLatency.cumulativeCount(through: 2) == 3)
        #expect([metrics[.actionsBytesReceived], metrics[.actionsBytesSent], metrics[.workersBytesReceived], metrics[.workersBytesSent], metrics[.feedBytesSent]] == [10, 11, 12, 13, 14])
        #expect(metrics[.journalBytes] == 15)
        #expect(metrics[.journalFsyncs] == 2)
        #expect(metrics.journalFsyncLatency.count == 1)
        #expect(metrics[.snapshotBytesWritten] == 500)
        #expect(metrics.snapshotBytes == 200)
        #expect(metrics.snapshotWriteDuration.sum == 0.02)
        #expect(metrics.observers == 1)
        #expect(metrics.dictionary["observers"] == 1)
        #expect(metrics.dictionary["snapshot_bytes"] == 200)
    }

    @Test func theExpositionNamesEveryCounterOnceWithTheNodesLabels() throws {
        var metrics = AuthorityMetrics()
        for (offset, counter) in AuthorityCounter.allCases.enumerated() { metrics[counter] = UInt64(offset + 1) }
        metrics.queuedJobs = 7
        metrics.ackLatency.observe(0.001)
        let labels: MetricLabels = ["app": "counter", "node": "authority"]
        let families = metrics.metricFamilies(labels: labels)
        #expect(Set(families.map(\.name)).count == families.count)
        for family in families {
            #expect(family.name.hasPrefix("reactorbus_"))
            #expect(family.kind != .counter || family.name.hasSuffix("_total"), "\(family.name)")
            #expect(family.samples.allSatisfy { Array($0.labels.pairs.prefix(2).map(\.value)) == ["counter", "authority"] })
        }
        // Every counter appears in exactly one sample, with its own value; but mutations_applied,
        // which is the sum of the mutations_applied_total{origin} series.
        let counted = families.filter { $0.kind == .counter }.flatMap(\.samples).map { sample -> UInt64 in
            guard case .number(let value) = sample.value else { return 0 }
            return UInt64(value)
        }
        let expected = AuthorityCounter.allCases.filter { $0 != .mutationsApplied }.map { metrics[$0] }
        #expect(counted.sorted() == expected.sorted())
        let text = PrometheusExposition.text(families)
        #expect(text.contains("reactorbus_actions_applied_total{app=\"counter\",node=\"authority\"} \(metrics[.actionsApplied])\n"))
        #expect(text.contains("reactorbus_actions_refused_total{app=\"counter\",node=\"authority\",reason=\"busy\"} \(metrics[.actionsBusy])\n"))
        #expect(text.contains("reactorbus_queued_jobs{app=\"counter\",node=\"authority\"} 7\n"))
        #expect(text.contains("reactorbus_ack_latency_seconds_bucket{app=\"counter\",node=\"authority\",le=\"0.001\"} 1\n"))
    }

    @Test func theWorkersExpositionCarriesItsCountersGaugesAndEffectDurations() {
        var metrics = WorkerMetrics()
        metrics.jobsDone = 5
        metrics.bytesSent = 99
        metrics.isRegistered = true
        metrics.effectDuration.observe(0.3)
        let text = PrometheusExposition.text(metrics.metricFamilies(labels: ["app": "counter", "node": "w1"]))
        #expect(text.contains("reactorbus_worker_jobs_done_total{app=\"counter\",node=\"w1\"} 5\n"))
        #expect(text.contains("reactorbus_socket_sent_bytes_total{app=\"counter\",node=\"w1\",socket=\"authority\"} 99\n"))
        #expect(text.contains("reactorbus_worker_registered{app=\"counter\",node=\"w1\"} 1\n"))
        #expect(text.contains("reactorbus_worker_effect_duration_seconds_bucket{app=\"counter\",node=\"w1\",le=\"0.5\"} 1\n"))
        #expect(text.contains("reactorbus_worker_effect_duration_seconds_count{app=\"counter\",node=\"w1\"} 1\n"))
    }
}
