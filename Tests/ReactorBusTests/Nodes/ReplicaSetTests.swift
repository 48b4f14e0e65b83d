@testable import ReactorBus
import Testing

/// The primary's streaming decisions, without sockets.
struct ReplicaSetTests {
    let peer: [UInt8] = [0, 1, 2, 3, 4]
    let other: [UInt8] = [0, 9, 9, 9, 9]

    func hello(after: UInt64, app: String = "counter", schema: UInt32 = 1, version: UInt32 = ReplicationMessage.protocolVersion) -> ReplicationMessage {
        var message = ReplicationMessage(.hello, term: 0, app: app, schema: schema, after: after)
        message.v = version
        return message
    }

    @Test func recordsComeFromMemoryThenTheJournalThenASnapshotAsTheStandbyFallsFurtherBehind() {
        #expect(ReplicaSet.source(sent: 100, recentFirst: 50, firstLSN: 1, lastLSN: 100) == .upToDate)
        #expect(ReplicaSet.source(sent: 49, recentFirst: 50, firstLSN: 1, lastLSN: 100) == .recent)
        #expect(ReplicaSet.source(sent: 48, recentFirst: 50, firstLSN: 1, lastLSN: 100) == .journal)
        #expect(ReplicaSet.source(sent: 0, recentFirst: nil, firstLSN: 1, lastLSN: 100) == .journal)
        #expect(ReplicaSet.source(sent: 9, recentFirst: 50, firstLSN: 10, lastLSN: 100) == .journal)
        #expect(ReplicaSet.source(sent: 8, recentFirst: 50, firstLSN: 10, lastLSN: 100) == .snapshot)
        #expect(ReplicaSet.source(sent: 101, recentFirst: 50, firstLSN: 1, lastLSN: 100) == .diverged)
    }

    @Test func aHelloIsRefusedForAnotherVersionAppSchemaOrALongerJournal() {
        var set = ReplicaSet(timeoutMilliseconds: 1_000)
        #expect(set.hello(peer, hello(after: 0, version: 2), app: "counter", schema: 1, lastLSN: 10, now: 0) == .version(2))
        #expect(set.hello(peer, hello(after: 0, app: "primes"), app: "counter", schema: 1, lastLSN: 10, now: 0) == .app("primes"))
        #expect(set.hello(peer, hello(after: 0, schema: 2), app: "counter", schema: 1, lastLSN: 10, now: 0) == .schema(2))
        #expect(set.hello(peer, hello(after: 11), app: "counter", schema: 1, lastLSN: 10, now: 0) == .diverged(standby: 11, primary: 10))
        #expect(set.count == 0)
        #expect(set.hello(peer, hello(after: 10), app: "counter", schema: 1, lastLSN: 10, now: 0) == nil)
        #expect(set.count == 1)
        #expect(set.replicas[peer]?.sent == 10)
    }

    /// A journal no longer than the primary's whose record at `after` is not the primary's (an
    /// old primary's tail that was never replicated) is refused; the same record, or nothing to
    /// compare (the primary no longer has it, or a standby of an earlier release sends no `crc`),
    /// is admitted.
    @Test func aHelloWhoseRecordAtItsEndIsNotThePrimarysIsRefused() {
        var set = ReplicaSet(timeoutMilliseconds: 1_000)
        var differing = hello(after: 13)
        differing.crc = 0xDEAD_BEEF
        #expect(set.hello(peer, differing, app: "counter", schema: 1, lastLSN: 15, ownCRC: 0x1234_5678, now: 0) == .differs(at: 13))
        #expect(set.count == 0)
        #expect(ReplicaSet.Refusal.differs(at: 13).code == "diverged")
        var same = hello(after: 13)
        same.crc = 0x1234_5678
        #expect(set.hello(peer, same, app: "counter", schema: 1, lastLSN: 15, ownCRC: 0x1234_5678, now: 0) == nil)
        #expect(set.hello(other, differing, app: "counter", schema: 1, lastLSN: 15, ownCRC: nil, now: 0) == nil)
        #expect(set.hello(other, hello(after: 13), app: "counter", schema: 1, lastLSN: 15, ownCRC: 0x1234_5678, now: 0) == nil)
        #expect(set.count == 2)
    }

    /// A `hello`'s `after` may name records the standby appended and has not committed: it is
    /// where streaming resumes, and what sync mode may ack through moves only with `durable`
    /// reports (a re-hello keeps what was reported, up to its `after`).
    @Test func aHellosLSNIsWhereStreamingResumesNotWhatTheStandbyHasDurable() {
        var set = ReplicaSet(window: 100, timeoutMilliseconds: 1_000)
        #expect(set.hello(peer, hello(after: 2_003), app: "counter", schema: 1, lastLSN: 5_000, now: 0) == nil)
        #expect(set.bestDurable == 0)
        #expect(set.replicas[peer]?.sent == 2_003)
        #expect(set.credit(peer) == 100, "the records through `after` are the standby's already, not in flight")
        set.durable(peer, lsn: 2_003, now: 1)
        #expect(set.bestDurable == 2_003)
        #expect(set.hello(peer, hello(after: 2_010), app: "counter", schema: 1, lastLSN: 5_000, now: 2) == nil)
        #expect(set.bestDurable == 2_003, "a re-hello keeps what was reported")
        #expect(set.hello(peer, hello(after: 1_000), app: "counter", schema: 1, lastLSN: 5_000, now: 3) == nil)
        #expect(set.bestDurable == 1_000, "but no more than the journal it says it has")
    }

    @Test func creditIsTheWindowLessTheRecordsNotYetReportedDurable() {
        var set = ReplicaSet(window: 100, timeoutMilliseconds: 1_000)
        #expect(set.credit(peer) == 0, "an unknown standby gets nothing")
        _ = set.hello(peer, hello(after: 5), app: "counter", schema: 1, lastLSN: 500, now: 0)
        #expect(set.credit(peer) == 100)
        set.update(peer) { $0.sent = 85 }
        #expect(set.credit(peer) == 20)
        set.update(peer) { $0.sent = 105 }
        #expect(set.credit(peer) == 0)
        let known1 = set.durable(peer, lsn: 55, now: 1)
        #expect(known1)
        #expect(set.credit(peer) == 50)
        set.update(peer) { $0.snapshot = (lsn: 7, bytes: [1]) }
        #expect(set.credit(peer) == 0, "no records while it fetches a snapshot")
    }

    @Test func syncModeAcksThroughTheBestStandbyAndTheLagIsMeasuredAgainstIt() {
        var set = ReplicaSet(timeoutMilliseconds: 1_000)
        #expect(set.bestDurable == nil)
        #expect(set.lag(lastLSN: 40) == 0)
        _ = set.hello(peer, hello(after: 0), app: "counter", schema: 1, lastLSN: 40, now: 0)
        _ = set.hello(other, hello(after: 0), app: "counter", schema: 1, lastLSN: 40, now: 0)
        let known2 = set.durable(peer, lsn: 30, now: 100)
        #expect(known2)
        let known3 = set.durable(other, lsn: 12, now: 600)
        #expect(known3)
        let known4 = set.durable(other, lsn: 11, now: 600)
        #expect(known4, "a late, older report never moves back")
        #expect(set.bestDurable == 30)
        #expect(set.lag(lastLSN: 40) == 10)
        let known5 = set.durable([7], lsn: 40, now: 600)
        #expect(!known5, "a standby that never said hello")
        // The better one goes silent: the other one counts; once both are gone, the last known.
        let first = set.expire(now: 1_200)
        #expect(first == [peer])
        #expect(set.bestDurable == 12)
        #expect(set.lag(lastLSN: 40) == 28)
        let second = set.expire(now: 1_700)
        #expect(second == [other])
        #expect(set.bestDurable == nil)
        #expect(set.lag(lastLSN: 50) == 20)
    }

    @Test func recentRecordsKeepTheNewestWithinTheirBoundsAndRestartAfterAGap() {
        var recent = RecentRecords(maxRecords: 3, maxBytes: 1_000)
        #expect(recent.payloads(from: 1, limit: 10) == nil)
        for lsn in UInt64(1)...5 { recent.append(lsn: lsn, payload: [UInt8(lsn)]) }
        #expect(recent.firstLSN == 3)
        #expect(recent.payloads(from: 2, limit: 10) == nil)
        #expect(recent.payloads(from: 3, limit: 10) == [[3], [4], [5]])
        #expect(recent.payloads(from: 4, limit: 1) == [[4]])
        #expect(recent.payloads(from: 6, limit: 10) == [])
        recent.append(lsn: 9, payload: [9])
        #expect(recent.firstLSN == 9)
        var small = RecentRecords(maxRecords: 100, maxBytes: 10)
        small.append(lsn: 1, payload: [UInt8](repeating: 1, count: 6))
        small.append(lsn: 2, payload: [UInt8](repeating: 2, count: 6))
        #expect(small.firstLSN == 2)
        small.append(lsn: 3, payload: [UInt8](repeating: 3, count: 20))
        #expect(small.firstLSN == 3, "one record over the bound is still kept")
    }

    @Test func messagesRoundTripAndGarbageIsNotOne() throws {
        let message = ReplicationMessage(.records, term: 0, first: 42)
        #expect(ReplicationMessage.decode(message.encoded()) == message)
        #expect(ReplicationMessage.decode([0xc1]) == nil)
        #expect(ReplicationMessage.decode(ReplicationMessage(.hello, app: "counter").encoded())?.v == ReplicationMessage.protocolVersion)
    }

    /// A standby that said `packed` gets its records in one frame; one of an older release,
    /// whose hello has no such field, a frame per record; a new hello says it again.
    @Test func aHelloSaysWhetherTheStandbyReadsPackedRecords() throws {
        var set = ReplicaSet(timeoutMilliseconds: 1_000)
        var packed = hello(after: 0)
        packed.packed = true
        #expect(set.hello(peer, packed, app: "counter", schema: 1, lastLSN: 10, now: 0) == nil)
        #expect(set.replicas[peer]?.packed == true)
        #expect(set.hello(peer, hello(after: 0), app: "counter", schema: 1, lastLSN: 10, now: 0) == nil)
        #expect(set.replicas[peer]?.packed == false)
        // The field round-trips, and a header without it (an older release's) reads as absent.
        #expect(ReplicationMessage.decode(packed.encoded())?.packed == true)
        #expect(ReplicationMessage.decode(hello(after: 0).encoded())?.packed == nil)
    }
}
