import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing

/// The one-way turn: the outbox carries everything the loop must do (what to publish, the
/// checkpoint when a snapshot is due), and what the loop saw comes back as a report the engine counts.
@Suite struct AuthorityOutboxTests {
    let writer = HeaderWriter()

    func makeEngine() -> AuthorityEngine<Counter> {
        let configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        return AuthorityEngine(reactor: Counter(), configuration: configuration, logger: Logger(label: "test", sink: .discard), journaling: true)
    }

    func countUp(_ engine: AuthorityEngine<Counter>, seq: UInt64) throws {
        let payload = try MessagePackEncoder().encode(Counter.Action.countUp)
        engine.handleClient([[1]] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: payload).frames(writer), now: 0)
    }

    @Test func withoutADemandTheOutboxCarriesTheHeadButNoFeedBytesAndNoCheckpoint() throws {
        let engine = makeEngine()
        try countUp(engine, seq: 1)
        try countUp(engine, seq: 2)
        let outbox = engine.takeOutbox()
        #expect(outbox.version == 2)
        #expect(outbox.actionSeq == 2)
        #expect(outbox.applied.map(\.payload) == [nil, nil])
        #expect(outbox.state == nil)
        #expect(outbox.checkpoint == nil)
        #expect(outbox.records.count == 2)
    }

    @Test func whileNoOneFollowsMutationsTheOutboxGathersNoneAndTheRestIsUnchanged() throws {
        let engine = makeEngine()
        engine.followsMutations = false
        try countUp(engine, seq: 1)
        try countUp(engine, seq: 2)
        let quiet = engine.takeOutbox()
        #expect(quiet.applied.isEmpty)
        #expect(quiet.version == 2)
        #expect(quiet.records.count == 2)
        #expect(quiet.replies.count == 2)
        // A subscriber came: from the next action on, every mutation, with its version.
        engine.followsMutations = true
        try countUp(engine, seq: 3)
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        let followed = engine.takeOutbox(.init(mutations: true))
        #expect(followed.applied.map(\.mutation.version) == [3])
        #expect(followed.applied.map(\.payload) == [increase])
    }

    @Test func theDemandForTheFeedGetsEveryMutationEncodedAndTheStateOnlyWhenItsVersionMoved() throws {
        let engine = makeEngine()
        // Before any snapshot was published, even version 0 is one to publish.
        #expect(engine.takeOutbox(.init(snapshot: true, publishedVersion: nil)).state.map(Array.init) == (try MessagePackEncoder().encode(Counter.State(count: 0))))
        try countUp(engine, seq: 1)
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        let first = engine.takeOutbox(.init(mutations: true, snapshot: true, publishedVersion: 0))
        #expect(first.applied.map(\.payload) == [increase])
        #expect(first.state.map(Array.init) == (try MessagePackEncoder().encode(Counter.State(count: 1))))
        // Nothing changed since version 1 was published: no state bytes.
        let second = engine.takeOutbox(.init(mutations: true, snapshot: true, publishedVersion: 1))
        #expect(second.state == nil)
        #expect(second.version == 1)
        #expect(second.applied.isEmpty)
        // No snapshot subscriber: no state bytes, whatever the version.
        try countUp(engine, seq: 2)
        #expect(engine.takeOutbox(.init(snapshot: false, publishedVersion: 1)).state == nil)
    }

    @Test func theStateTakenAfterTheOutboxIsTheTurnsWhenDueAndNothingOtherwise() throws {
        let engine = makeEngine()
        try countUp(engine, seq: 1)
        try countUp(engine, seq: 2)
        // The outbox taken without the snapshot; the acks would leave now; then the state.
        let outbox = engine.takeOutbox(.init(publishedVersion: 0))
        #expect(outbox.state == nil && outbox.replies.count == 2)
        let due = engine.feedState(.init(snapshot: true, publishedVersion: 0))
        guard case .encoded(let bytes, let nanoseconds) = due else {
            Issue.record("expected the state encoded on the loop, got \(String(describing: due))")
            return
        }
        #expect(Array(bytes) == (try MessagePackEncoder().encode(Counter.State(count: 2))))
        #expect(nanoseconds != nil)
        // Asked again at the same version (a request's snapshot): the same bytes, no new encoding.
        #expect(engine.feedState(.init(snapshot: true, publishedVersion: nil)) == .encoded(bytes, nanoseconds: nil))
        // Published already, not wanted, or not yet due by count: nothing.
        #expect(engine.feedState(.init(snapshot: true, publishedVersion: 2)) == nil)
        #expect(engine.feedState(.init(snapshot: false, publishedVersion: 0)) == nil)
        #expect(engine.feedState(.init(snapshot: false, publishedVersion: 0, snapshotAtVersion: 3)) == nil)
        // Due by count once the version reaches it, whether or not time allows.
        try countUp(engine, seq: 3)
        _ = engine.takeOutbox()
        let byCount = engine.feedState(.init(snapshot: false, publishedVersion: 2, snapshotAtVersion: 3))
        guard case .encoded(let countBytes, _) = byCount else {
            Issue.record("expected the state encoded on the loop, got \(String(describing: byCount))")
            return
        }
        #expect(Array(countBytes) == (try MessagePackEncoder().encode(Counter.State(count: 3))))
    }

    @Test func theCheckpointComesOnlyOnceTheTurnHasTheRecordsTheDemandNames() throws {
        let engine = makeEngine()
        try countUp(engine, seq: 1)
        #expect(engine.takeOutbox(.init(checkpointAtRecords: 2)).checkpoint == nil)
        try countUp(engine, seq: 2)
        try countUp(engine, seq: 3)
        let due = try #require(engine.takeOutbox(.init(checkpointAtRecords: 2)).checkpoint)
        #expect(due.sequencer.version == 3)
        #expect(due.app == "counter")
        // 0: due now, even without records (a snapshot by time, or the final one).
        #expect(engine.takeOutbox(.init(checkpointAtRecords: 0)).checkpoint?.sequencer.version == 3)
    }

    @Test func aTakenReportLeavesAnEmptyOneThatCountsAfresh() {
        var report = AuthorityLoopReport()
        #expect(report.isEmpty)
        report.acks = 3
        report.ackLatency.observe(0.001, times: 3)
        report.journalLSN = 9
        let taken = report.take()
        #expect(taken.acks == 3 && taken.ackLatency.count == 3 && taken.journalLSN == 9)
        #expect(report.isEmpty && report.ackLatency.count == 0 && report.journalLSN == nil)
        report.acks = 1
        #expect(!report.isEmpty && report.take().acks == 1)
        #expect(report.isEmpty)
    }

    @Test func theEngineCountsWhatTheLoopReports() throws {
        let engine = makeEngine()
        var report = AuthorityLoopReport()
        report.journalRecords = 5
        report.journalCommits = 2
        report.snapshotsWritten = 1
        report.snapshotsPublished = 3
        report.handshakesRefused = 4
        report.repliesRefusedBytes = 6
        report.feedHighWaterMark = 700
        var more = AuthorityLoopReport()
        more.journalRecords = 1
        report.merge(more)
        engine.absorb(report)
        engine.absorb(AuthorityLoopReport())
        let metrics = engine.currentMetrics()
        #expect(metrics[.journalRecords] == 6)
        #expect(metrics[.journalCommits] == 2)
        #expect(metrics[.snapshotsWritten] == 1)
        #expect(metrics[.snapshotsPublished] == 3)
        #expect(metrics[.handshakesRefused] == 4)
        #expect(metrics[.repliesRefusedBytes] == 6)
        #expect(metrics.feedHighWaterMark == 700, "a report without a mark keeps the last one")
    }
}
