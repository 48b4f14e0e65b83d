import Coordination
import Foundation
import Testing
import TestSupport
import TestTraits

/// Leader election against a real etcd on loopback (one etcd per test, on its own ports).
/// Each EtcdServer is killed, reaped and its data removed when the test drops it.
@Suite(.spawnsProcesses) struct LeaderElectionTests {
    /// An election of app `app` on `etcd`, with a fast poll.
    func election(_ etcd: EtcdServer, ttl: Int64 = 2, endpoints: [String]? = nil) throws -> LeaderElection {
        let client = try EtcdClient(endpoints: endpoints ?? [etcd.clientURL])
        return try LeaderElection(client: client, configuration: LeaderElectionConfiguration(app: "tally", ttlSeconds: ttl, pollInterval: .milliseconds(50)))
    }

    @Test func oneCandidateWinsAndGetsAnEpoch() async throws {
        let etcd = try await EtcdServer.start()
        let election = try election(etcd)
        #expect(try election.currentLeader() == nil)
        let lost = Box(0)
        let term = try await onThread { try election.campaign(as: candidate("a"), deadline: .now + promptly) { _ in lost.value += 1 } }.get()
        #expect(term.epoch > 0)
        #expect(term.isLeader)
        #expect(term.key == "/reactorbus/tally/leader")
        #expect(term.lease.ttl == 2)
        #expect(try election.currentLeader() == Leader(info: candidate("a"), epoch: term.epoch, lease: term.lease.id))
        try term.resign()
        #expect(!term.isLeader)
        #expect(try election.currentLeader() == nil)
        #expect(lost.value == 0)
    }

    @Test func aSecondCandidateDoesNotWinWhileTheFirstKeepsItsLease() async throws {
        let etcd = try await EtcdServer.start()
        let election = try election(etcd, ttl: 1)
        let lost = Box(0)
        let first = try await onThread { try election.campaign(as: candidate("a"), deadline: .now + promptly) { _ in lost.value += 1 } }.get()
        // Three TTLs: the first candidate's keepalives must carry its lease through all of them.
        let started = ContinuousClock.now
        let second = await onThread { try election.campaign(as: candidate("b"), deadline: .now + .seconds(3)) { _ in } }
        #expect(ContinuousClock.now - started >= .seconds(3))
        let expected = Leader(info: candidate("a"), epoch: first.epoch, lease: first.lease.id)
        #expect(throws: CoordinationError.campaignTimedOut(key: election.key, leader: expected)) { try second.get() }
        #expect(first.isLeader)
        #expect(first.loss == nil)
        #expect(lost.value == 0)
        #expect(try election.currentLeader() == expected)
        try first.resign()
    }

    @Test func resigningHandsOverToTheStandbyWithALargerEpoch() async throws {
        let etcd = try await EtcdServer.start()
        let election = try election(etcd)
        let first = try await onThread { try election.campaign(as: candidate("a"), deadline: .now + promptly) { _ in } }.get()
        let seen = Box<[String?]>([])
        let observer = election.observe { leader in seen.value.append(leader.map { "\($0.info.name)@\($0.epoch)" }) }
        defer { observer.stop() }
        #expect(await eventually { seen.value == ["a@\(first.epoch)"] }, "\(seen.value)")

        let standby = Task { await onThread { try election.campaign(as: candidate("b"), deadline: .now + promptly) { _ in } } }
        let resigned = ContinuousClock.now
        try first.resign()
        let second = try await standby.value.get()
        let takeover = ContinuousClock.now - resigned
        #expect(second.epoch > first.epoch)
        #expect(second.isLeader)
        #expect(!first.isLeader)
        #expect(first.loss == nil)
        // The standby polls every 50 ms and wins at its next poll after the key's deletion; the
        // bound is loose (a loaded machine), but far below the lease expiry a missing revoke
        // would take (etcd's minimum lease of several seconds here) and the campaign's deadline.
        #expect(takeover < .seconds(5), "takeover after a resignation took \(takeover)")
        #expect(try election.currentLeader()?.info == candidate("b"))
        let last = "b@\(second.epoch)"
        #expect(await eventually { seen.value.last == last }, "\(seen.value)")
        // a, then possibly no leader for a poll, then b: nothing else, nothing twice.
        #expect(seen.value == ["a@\(first.epoch)", last] || seen.value == ["a@\(first.epoch)", nil, last], "\(seen.value)")
        #expect(observer.latest?.epoch == second.epoch)
        print("takeover after resign (TTL 2 s, poll 50 ms): \(takeover)")
        try second.resign()
    }

    @Test(arguments: [Int64(1), 2])
    func aStalledLeaderIsFencedBeforeTheStandbyWins(ttl: Int64) async throws {
        let etcd = try await EtcdServer.start()
        let election = try election(etcd, ttl: ttl)
        let lostAt = Box<ContinuousClock.Instant?>(nil)
        let losses = Box<[LeadershipLoss]>([])
        let first = try await onThread {
            try election.campaign(as: candidate("a"), deadline: .now + promptly) { loss in
                lostAt.value = .now
                losses.value.append(loss)
            }
        }.get()
        #expect(first.lease.ttl == ttl)
        let standby = Task { await onThread { try election.campaign(as: candidate("b"), deadline: .now + promptly) { _ in } } }
        let stalled = ContinuousClock.now
        first.stallKeepalivesForTesting()
        let second = try await standby.value.get()
        let wonAt = ContinuousClock.now
        let lost = try #require(lostAt.value, "the stalled leader never noticed")
        // The keeper's last word: the lease was known to live until fence + margin.
        let fence = first.fenceDeadline
        let margin = election.configuration.effectiveSafetyMargin
        #expect(lost >= fence)
        #expect(lost < wonAt)
        // etcd let the standby in only after the lease the stalled leader knew of had run out.
        #expect(wonAt >= fence + margin)
        #expect(losses.value == [LeadershipLoss(epoch: first.epoch, reason: .fenced(lastError: nil))])
        #expect(!first.isLeader)
        #expect(second.epoch > first.epoch)
        // Loose on a loaded machine: what matters is the order above (fenced, then lease over,
        // then the standby); this says the standby won about when the lease ended (etcd checks
        // expiry every 500 ms), not at some later retry.
        #expect(wonAt - stalled <= .seconds(ttl) + .seconds(8))
        print("TTL \(ttl) s: stalled leader fenced after \(lost - stalled), standby won after \(wonAt - stalled) (\(wonAt - lost) after the fence)")
        try second.resign()
    }

    @Test func aRevokedLeaseIsReportedLostAtTheNextKeepalive() async throws {
        let etcd = try await EtcdServer.start()
        let election = try election(etcd, ttl: 2)
        let losses = Box<[LeadershipLoss]>([])
        let term = try await onThread { try election.campaign(as: candidate("a"), deadline: .now + promptly) { losses.value.append($0) } }.get()
        let revoked = ContinuousClock.now
        #expect(try election.client.revokeLease(term.lease.id))
        #expect(await eventually { !losses.value.isEmpty })
        // Keepalives go every TTL/2, half a TTL before the fence: the next one finds the lease gone. The reason says it was
        // that keepalive (`leaseExpired`), not the fence's deadline (`fenced`), whatever the
        // machine's load did to the timing.
        #expect(losses.value == [LeadershipLoss(epoch: term.epoch, reason: .leaseExpired)], "after \(ContinuousClock.now - revoked)")
        #expect(!term.isLeader)
    }

    @Test func aLeaderWhoseEtcdDiesIsFencedWithinTheTTL() async throws {
        let etcd = try await EtcdServer.start()
        let election = try election(etcd, ttl: 2)
        let lostAt = Box<ContinuousClock.Instant?>(nil)
        let losses = Box<[LeadershipLoss]>([])
        let term = try await onThread {
            try election.campaign(as: candidate("a"), deadline: .now + promptly) { loss in
                lostAt.value = .now
                losses.value.append(loss)
            }
        }.get()
        let killed = ContinuousClock.now
        await etcd.kill()
        #expect(await eventually(within: .seconds(5)) { lostAt.value != nil })
        let lost = try #require(lostAt.value)
        #expect(lost - killed <= .seconds(2), "fenced \(lost - killed) after etcd died")
        #expect(lost >= term.fenceDeadline)
        #expect(!term.isLeader)
        let loss = try #require(losses.value.first)
        #expect(losses.value.count == 1)
        #expect(loss.epoch == term.epoch)
        guard case .fenced(let lastError?) = loss.reason else {
            Issue.record("expected a fence with the last error, got \(loss)")
            return
        }
        #expect(lastError.contains("127.0.0.1:\(etcd.clientPort)"), "\(lastError)")
        print("etcd killed under the leader (TTL 2 s): fenced after \(lost - killed)")
        #expect(throws: CoordinationError.self) { try term.resign(timeout: .milliseconds(200)) }
        await etcd.stop()
    }

    @Test func aDeadFirstEndpointIsSkipped() async throws {
        let etcd = try await EtcdServer.start()
        let election = try election(etcd, ttl: 1, endpoints: [try deadEndpoint(), etcd.clientURL])
        let losses = Box(0)
        let term = try await onThread { try election.campaign(as: candidate("a"), deadline: .now + promptly) { _ in losses.value += 1 } }.get()
        #expect(try election.currentLeader()?.epoch == term.epoch)
        // Keepalives get through the live endpoint: the fence moves past where the grant put it.
        let initialFence = term.fenceDeadline
        #expect(await eventually { term.fenceDeadline > initialFence + .milliseconds(600) })
        #expect(term.isLeader)
        #expect(losses.value == 0)
        try term.resign()
        #expect(try election.currentLeader() == nil)
    }

    @Test func aMalformedLeaderValueIsATypedError() async throws {
        let etcd = try await EtcdServer.start()
        let election = try election(etcd)
        try election.client.put(election.key, value: Data("not a leader".utf8))
        #expect(throws: CoordinationError.malformedLeaderValue(key: election.key, detail: "12 bytes: 'not a leader'")) {
            try election.currentLeader()
        }
        // A candidate waits for such a key like for any leader's, and reports it as nobody.
        let waited = await onThread { try election.campaign(as: candidate("a"), deadline: ContinuousClock.now + .milliseconds(300)) { _ in } }
        #expect(throws: CoordinationError.campaignTimedOut(key: election.key, leader: nil)) { try waited.get() }
        #expect(try election.client.delete(election.key) == 1)
        let term = try await onThread { try election.campaign(as: candidate("a"), deadline: .now + promptly) { _ in } }.get()
        #expect(term.isLeader)
        try term.resign()
    }

    @Test func aCancelledCampaignEndsAtOnce() async throws {
        let etcd = try await EtcdServer.start()
        let election = try election(etcd)
        let first = try await onThread { try election.campaign(as: candidate("a"), deadline: .now + promptly) { _ in } }.get()
        let flag = CancellationFlag()
        // A deadline a minute away, so that an end well before it can only be the cancellation's.
        let standby = Task { await onThread { try election.campaign(as: candidate("b"), deadline: .now + .seconds(60), cancellation: flag) { _ in } } }
        let cancelled = ContinuousClock.now
        flag.cancel()
        let outcome = await standby.value
        #expect(throws: CoordinationError.cancelled) { try outcome.get() }
        #expect(ContinuousClock.now - cancelled < .seconds(20))
        #expect(first.isLeader)
        try first.resign()
    }
}
