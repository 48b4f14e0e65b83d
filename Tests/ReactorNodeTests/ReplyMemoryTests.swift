import Foundation
@testable import ReactorBus
import ReactorWire
import Testing
import TestTraits
import ZeroMQ

/// A client that keeps asking for snapshots and never reads its replies costs the authority a
/// bounded number of bytes (`--client-queue-bytes`), not up to 100,000 copies of the state; every
/// request still gets exactly one answer, the snapshot or `busy`.
@Suite(.spawnsProcesses, .serialized) struct ReplyMemoryTests {
    /// The per-client reply budget the authority runs with here.
    static let clientQueueBytes = 16 << 20
    /// What the authority may grow by besides the budget: the batch in hand (frames of 2,000
    /// replies sharing one encoded state), heap slack. Measured: the run grows the authority by
    /// 16.8 MiB with this 16 MiB budget (about 60 snapshots queued, the rest refused); with no
    /// effective bound (a 1 TiB budget) the same run grows it by 624 MiB, all 2,000 replies queued.
    static let marginBytes = 24 << 20
    static let requests = 2_000

    let writer = HeaderWriter()

    /// `VmRSS` of a process, in bytes.
    private func residentBytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? ""))
        return kilobytes * 1_024
    }

    /// The next reply on `socket`, waiting at most `timeout`; `nil` if none came.
    private func nextReply(_ socket: ZMQSocket, within timeout: Duration) throws -> AuthorityReply? {
        let poller = ZMQPoller()
        try poller.register(socket)
        let deadline = ContinuousClock.now + timeout
        while true {
            if let frames = try socket.tryReceiveMultipart() { return try AuthorityReply(frames: frames) }
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return nil }
            _ = try poller.poll(timeout: max(1, Int(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000)))
        }
    }

    @Test func aClientThatNeverReadsCostsAtMostItsReplyBudgetAndEveryRequestIsAnswered() async throws {
        let cluster = try await ClusterProcesses(app: "inventory", extra: ["--client-queue-bytes", String(Self.clientQueueBytes)])
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let dealer = try ZMQSocket(context: context, type: .dealer)
        defer { dealer.close() }
        // The client's own queue holds one message: past it, TCP pushes back on the authority.
        try dealer.set(.receiveHighWaterMark, 1)
        try dealer.connect(cluster.endpoints.actions)

        // One snapshot read first: the state's size, and the authority's memory once it has encoded it.
        try dealer.send(ClientMessage.snapshot(requestID: 0).frames(writer))
        let first = try #require(try nextReply(dealer, within: .seconds(15)), "no snapshot\(cluster.authority.diagnostics)")
        guard case .snapshot(0, _, _, "inventory", let state) = first else {
            Issue.record("expected snapshot 0, got \(first)")
            return
        }
        // The 10,000-item inventory: over 300,000 bytes per snapshot.
        #expect(state.count > 300_000)
        let baseline = try residentBytes(cluster.authority.pid)

        for id in 1...UInt64(Self.requests) { try dealer.send(ClientMessage.snapshot(requestID: id).frames(writer)) }
        var peak = baseline
        var stats: [String: UInt64] = [:]
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            peak = max(peak, try residentBytes(cluster.authority.pid))
            stats = try await cluster.stats()
            // Requests are counted when handled, refusals when the loop sends (a later report).
            if stats["snapshot_requests"] == UInt64(Self.requests) + 1, (stats["replies_refused_bytes"] ?? 0) > 0 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(stats["snapshot_requests"] == UInt64(Self.requests) + 1, "\(cluster.authority.diagnostics)")
        peak = max(peak, try residentBytes(cluster.authority.pid))
        let refused = try #require(stats["replies_refused_bytes"])
        #expect(refused > 0)
        #expect(peak <= baseline + Self.clientQueueBytes + Self.marginBytes,
                "authority RSS grew from \(baseline >> 20) MiB to \(peak >> 20) MiB with a \(Self.clientQueueBytes >> 20) MiB reply budget")

        // Reading at last: every request has exactly one answer, the state or busy naming the limit.
        var snapshots = Set<UInt64>()
        var busy = Set<UInt64>()
        while snapshots.count + busy.count < Self.requests, let reply = try nextReply(dealer, within: .seconds(15)) {
            switch reply {
            case .snapshot(let id, _, _, _, let payload):
                #expect(payload == state)
                #expect(snapshots.insert(id).inserted, "two snapshots for request \(id)")
            case .error(let ref, .busy, let message):
                #expect(message.contains("--client-queue-bytes") && message.contains(String(Self.clientQueueBytes)), "\(message)")
                #expect(busy.insert(ref).inserted, "two refusals of request \(ref)")
            default:
                Issue.record("unexpected reply \(reply)")
            }
        }
        #expect(snapshots.count + busy.count == Self.requests)
        #expect(snapshots.isDisjoint(with: busy))
        #expect(snapshots.union(busy) == Set(1...UInt64(Self.requests)))
        #expect(UInt64(busy.count) == (try await cluster.stats())["replies_refused_bytes"])
        // At least the budget's worth went out before the refusals began.
        #expect(snapshots.count >= Self.clientQueueBytes / (state.count + ReplyBudget.messageOverhead))
        #expect(try nextReply(dealer, within: .milliseconds(200)) == nil)

        // Once read, the client is served again.
        try dealer.send(ClientMessage.snapshot(requestID: 9_999).frames(writer))
        guard case .snapshot(9_999, _, _, _, _)? = try nextReply(dealer, within: .seconds(15)) else {
            Issue.record("no snapshot after the client read its replies")
            return
        }
        // The refusals were logged, not once per request.
        let warnings = cluster.authority.diagnostics.split(separator: "\n").filter { $0.contains("--client-queue-bytes") }
        #expect((1...3).contains(warnings.count), "\(warnings.count) warnings for \(refused) refusals")
        await cluster.stop()
    }
}
