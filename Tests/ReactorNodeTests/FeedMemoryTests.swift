import Foundation
import Testing
import TestSupport
import TestTraits

/// A stalled feed subscriber costs the authority a bounded number of bytes, not a bounded number
/// of (possibly huge) snapshots; it resynchronises once it runs again, and the memory comes back.
@Suite(.spawnsProcesses, .serialized) struct FeedMemoryTests {
    /// The feed budget the authority runs with in these tests.
    static let feedQueueBytes = 8 << 20
    /// What the authority may grow by besides the feed queue while actions arrive (the actions
    /// socket's queues, the batch in hand, heap slack). Measured at a few MiB on a 2-core machine;
    /// without the byte bound the same run grows by some 250 MiB (one 330 KB snapshot per batch).
    static let marginBytes = 24 << 20
    static let actions = 12_000

    /// `VmRSS` of a process, in bytes.
    private func residentBytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? ""))
        return kilobytes * 1_024
    }

    @Test func aStoppedObserverCostsAtMostTheFeedBudgetAndResyncsWhenItResumes() async throws {
        let cluster = try await ClusterProcesses(app: "inventory", extra: ["--feed-queue-bytes", String(Self.feedQueueBytes),
                                                                               // A snapshot after every batch, as many as the feed can take.
                                                                               "--feed-snapshot-every", "1"])
        let observer = try ChildProcess.node(["observe", "--app", "inventory", "--feed", cluster.endpoints.feed, "--actions", cluster.endpoints.actions, "--json"],
                                       name: "observer")
        // Subscribed and holding the first snapshot: its pipe exists before the feed sees a large message.
        #expect(await observer.waitForLine { $0.contains("\"version\"") } != nil, "\(observer.diagnostics)")
        // The initial snapshot went out on the feed once the subscription arrived.
        let deadline = ContinuousClock.now + .seconds(10)
        while try await cluster.stats()["snapshots_published"] ?? 0 < 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        // That first large message lowered the feed's mark, and the feed was bound again for
        // it: once the observer has reconnected, a snapshot reaches it again. One action at a
        // time until one is published (the queue to stall is the one of that new connection).
        var warmUp = 0
        while try await cluster.stats()["snapshots_published"] ?? 0 < 2, ContinuousClock.now < deadline {
            #expect(try await cluster.send([#"{"adjust":{"item":1,"by":1}}"#], repeat: 1).status == 0)
            warmUp += 1
        }
        #expect(try await cluster.stats()["snapshots_published"] ?? 0 >= 2, "no snapshot after the feed was bound again\(cluster.authority.diagnostics)")
        let baseline = try residentBytes(cluster.authority.pid)
        observer.signal(SIGSTOP)
        defer { observer.signal(SIGCONT) }

        let sender = try ChildProcess.node(["send", "--app", "inventory", "--actions", cluster.endpoints.actions, "--repeat", String(Self.actions),
                                            "--concurrency", "16", #"{"adjust":{"item":1,"by":1}}"#], name: "send")
        var peak = baseline
        let sendDeadline = ContinuousClock.now + .seconds(90)
        while sender.isRunning, ContinuousClock.now < sendDeadline {
            peak = max(peak, try residentBytes(cluster.authority.pid))
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(await sender.waitForExit() == 0, "\(sender.diagnostics)")
        #expect(sender.output.last?.contains(#""acked":\#(Self.actions)"#) == true)
        peak = max(peak, try residentBytes(cluster.authority.pid))

        let stats = try await cluster.stats()
        let published = try #require(stats["snapshots_published"])
        let mark = try #require(stats["feed_high_water_mark"])
        // Each snapshot of the 10,000-item inventory is over 300,000 bytes: the feed derived a mark
        // of at most budget / 300,000 messages, and published far more than the budget holds.
        #expect((2...UInt64(Self.feedQueueBytes / 300_000)).contains(mark), "feed_high_water_mark \(mark)")
        #expect(published * 300_000 > UInt64(8 * Self.feedQueueBytes), "only \(published) snapshots published: the run proves nothing")
        #expect(peak <= baseline + Self.feedQueueBytes + Self.marginBytes,
                "authority RSS grew from \(baseline >> 20) MiB to \(peak >> 20) MiB with a \(Self.feedQueueBytes >> 20) MiB feed budget")

        // Resumed, the observer reads its stale queue, sees newer heartbeats and fetches the state.
        observer.signal(SIGCONT)
        // Lines are some 470 KB of JSON each; the count comes first, so only the head of each line is searched.
        let final = await observer.waitForLine(timeout: .seconds(40)) { line in
            String(decoding: line.utf8.prefix(80), as: UTF8.self).contains(#""adjustments":\#(Self.actions + warmUp),"#)
        }
        #expect(final != nil, "observer never reached the final state\(observer.diagnostics)")
        // Once its queue has drained, the authority gives the memory back (trimmed every 2 s).
        var resident = try residentBytes(cluster.authority.pid)
        let trimDeadline = ContinuousClock.now + .seconds(10)
        while resident > baseline + Self.marginBytes / 2, ContinuousClock.now < trimDeadline {
            try await Task.sleep(for: .milliseconds(100))
            resident = try residentBytes(cluster.authority.pid)
        }
        #expect(resident <= baseline + Self.marginBytes / 2, "authority RSS still \(resident >> 20) MiB after the observer drained (baseline \(baseline >> 20) MiB)")

        observer.signal(SIGTERM)
        #expect(await observer.waitForExit() == 0, "\(observer.diagnostics)")
        await cluster.stop()
    }
}
