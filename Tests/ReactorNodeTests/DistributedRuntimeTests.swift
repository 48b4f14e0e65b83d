import Foundation
import MessagePack
import ReactorApps
import ReactorBus
import ReactorCore
import ReactorWire
import Testing
import TestSupport
import TestTraits

/// The mission, with real processes on loopback: authority, workers, clients, observers.
@Suite(.spawnsProcesses, .serialized) struct DistributedRuntimeTests {
    static let countUp = #"{"countUp":{}}"#
    static let countUpAsync = #"{"countUpAsync":{}}"#

    private func versions(_ observer: ChildProcess) throws -> [UInt64] {
        try observer.output.compactMap { line -> UInt64? in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return (object["version"] as? NSNumber)?.uint64Value
        }
    }

    private func count(_ snapshot: [String: Any]) -> Int? {
        ((snapshot["state"] as? [String: Any])?["count"] as? NSNumber)?.intValue
    }

    @Test func tenThousandMixedActionsFromFourClientsCountExactly() async throws {
        let cluster = try await ClusterProcesses()
        try cluster.addWorker()
        try cluster.addWorker()
        try await cluster.waitForWorkers(2)
        let observer = try ChildProcess.node(["observe", "--app", "counter", "--feed", cluster.endpoints.feed, "--actions", cluster.endpoints.actions, "--json"], name: "observer")
        #expect(await observer.waitForLine { $0.contains("\"version\"") } != nil)
        let senders = try (1...4).map { index in
            try ChildProcess.node(["send", "--app", "counter", "--actions", cluster.endpoints.actions, "--repeat", "1250", "--concurrency", "32",
                                   Self.countUp, Self.countUpAsync], name: "send-\(index)")
        }
        for sender in senders {
            #expect(await sender.waitForExit(timeout: .seconds(120)) == 0, "\(sender.diagnostics)")
            #expect(sender.output.last?.contains(#""acked":2500"#) == true)
        }
        #expect(await observer.waitForLine(timeout: .seconds(30)) { $0.contains(#""count":10000"#) } != nil, "\(observer.diagnostics)")
        let seen = try versions(observer)
        #expect(seen.count >= 2)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "observer versions not strictly increasing")
        #expect(count(try await cluster.snapshot()) == 10_000)
        let stats = try await cluster.stats()
        #expect(stats["actions_accepted"] == 10_000)
        #expect(stats["jobs_done"] == 5_000)
        #expect(stats["version"] == 10_000)
        observer.signal(SIGTERM)
        #expect(await observer.waitForExit() == 0)
        await cluster.stop()
    }

    @Test func killingAWorkerMidRunStillCountsExactly() async throws {
        let cluster = try await ClusterProcesses()
        let doomed = try cluster.addWorker(["--effect-delay", "0.005"])
        try cluster.addWorker(["--effect-delay", "0.005"])
        try await cluster.waitForWorkers(2)
        let sending = try ChildProcess.node(["send", "--app", "counter", "--actions", cluster.endpoints.actions, "--repeat", "5000", "--concurrency", "64",
                                             Self.countUp, Self.countUpAsync], name: "send")
        // Kill once the doomed worker has had work, then start a replacement.
        var killedAt: UInt64 = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let stats = try await cluster.stats()
            if stats["jobs_done"] ?? 0 >= 500 {
                killedAt = stats["jobs_done"] ?? 0
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(killedAt >= 500)
        doomed.signal(SIGKILL)
        #expect(await doomed.waitForExit() != 0)
        try cluster.addWorker(["--effect-delay", "0.005"])
        #expect(await sending.waitForExit(timeout: .seconds(120)) == 0, "\(sending.diagnostics)")
        let finalDeadline = ContinuousClock.now + .seconds(60)
        var final = 0
        while ContinuousClock.now < finalDeadline {
            final = count(try await cluster.snapshot()) ?? 0
            if final >= 10_000 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(final == 10_000, "\(cluster.authority.diagnostics)")
        let stats = try await cluster.stats()
        #expect(stats["open_jobs"] == 0)
        #expect(stats["mutations_applied"] == 10_000)
        #expect(stats["workers_lost"] ?? 0 >= 1)
        await cluster.stop()
    }

    @Test func aLateObserverGetsTheCurrentStateAtOnce() async throws {
        let cluster = try await ClusterProcesses()
        let result = try await cluster.send([Self.countUp], repeat: 250)
        #expect(result.status == 0)
        let started = ContinuousClock.now
        let observer = try ChildProcess.node(["observe", "--app", "counter", "--feed", cluster.endpoints.feed, "--actions", cluster.endpoints.actions, "--json"], name: "late-observer")
        let first = await observer.waitForLine(timeout: .seconds(10)) { $0.contains("\"version\"") }
        #expect(first == #"{"version":250,"state":{"count":250}}"#)
        #expect(ContinuousClock.now - started < .seconds(5))
        observer.signal(SIGINT)
        #expect(await observer.waitForExit() == 0)
        await cluster.stop()
    }

    @Test func theMutationFeedShowsSyncFirstEmitOrderAndLaneOrder() async throws {
        let cluster = try await ClusterProcesses(app: "primes")
        try cluster.addWorker()
        try await cluster.waitForWorkers(1)
        let tap = try FeedTap(feed: cluster.endpoints.feed, topics: [FeedMessage.Topic.mutation])
        #expect(try await tap.waitUntilSubscribed())
        // Action 1: a sync mutation and one effect emitting 2, 2, 3, finished.
        // Actions 2 and 3 share the ordered lane; 2 is slow, 3 is fast, yet 2 applies first.
        let sent = try await cluster.send([#"{"factor":{"n":12}}"#, #"{"factorInOrder":{"n":360,"delayMs":400}}"#, #"{"factorInOrder":{"n":97,"delayMs":0}}"#], repeat: 1, concurrency: 1)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        #expect(try await tap.read(timeout: .seconds(20)) { messages in
            messages.filter { if case .mutation = $0 { true } else { false } }.count >= 5 + 8 + 3
        })
        let decoder = MessagePackDecoder()
        let mutations = try tap.mutations.map { ($0.version, $0.actionSeq, $0.origin, try decoder.decode(Primes.Mutation.self, from: $0.payload)) }
        #expect(mutations.map(\.0) == Array(1...UInt64(mutations.count)))
        let first = mutations.filter { $0.1 == 1 }
        #expect(first.map(\.3) == [.requested(n: 12), .prime(n: 12, factor: 2), .prime(n: 12, factor: 2), .prime(n: 12, factor: 3), .finished(n: 12)])
        #expect(first.map(\.2) == [.sync(index: 0)] + (0..<4).map { .async(job: JobID(actionSeq: 1, effectIndex: 0), emitIndex: $0) })
        let finished = mutations.compactMap { if case .finished(let n) = $0.3 { n } else { nil } }
        #expect(finished == [12, 360, 97])
        // Every sync mutation of an action comes before any of its async ones.
        for seq in 1...3 as ClosedRange<UInt64> {
            let origins = mutations.filter { $0.1 == seq }.map(\.2)
            #expect(origins.first == .sync(index: 0))
        }
        await cluster.stop()
    }

    @Test func aPipeliningClientsAcksShareMessagesAndEachActionIsAckedOnce() async throws {
        // `send` (an ActionClient) asks for batched acks on connecting; with 1,000 in flight the
        // authority reads many of its actions per turn, and their acks share `acks` messages.
        let cluster = try await ClusterProcesses()
        let sent = try await cluster.send([Self.countUp], repeat: 2_000, concurrency: 1_000)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        #expect(sent.summary?.contains(#""acked":2000"#) == true, "\(sent.summary ?? "no summary")")
        let stats = try await cluster.stats()
        #expect(stats["actions_accepted"] == 2_000 && stats["acks"] == 2_000 && stats["version"] == 2_000)
        #expect(stats["actions_duplicate"] == 0, "nothing resent: every ack arrived")
        let batches = stats["ack_batches"] ?? 0
        #expect(batches >= 1 && batches <= 1_000, "acks messages carry 2 acks or more: \(batches)")
        await cluster.stop()
    }

    @Test func thePythonClientDrivesTheAuthorityAndFollowsTheFeed() async throws {
        let cluster = try await ClusterProcesses()
        try cluster.addWorker()
        try await cluster.waitForWorkers(1)
        let script = ChildProcess.packageRoot + "/examples/python/reactorbus_client.py"
        let base = [script, "--actions", cluster.endpoints.actions, "--feed", cluster.endpoints.feed]
        let follow = try ChildProcess.program(executable: "/usr/bin/env", arguments: ["python3"] + base + ["follow", "--until", "count=400", "--for", "60"], name: "python-follow")
        #expect(await follow.waitForLine { $0.contains("\"version\"") } != nil, "\(follow.diagnostics)")
        let send = try ChildProcess.program(executable: "/usr/bin/env", arguments: ["python3"] + base + ["send", "--repeat", "200", Self.countUp, Self.countUpAsync], name: "python-send")
        #expect(await send.waitForExit(timeout: .seconds(60)) == 0, "\(send.diagnostics)")
        #expect(send.output.last?.contains(#""acked": 400"#) == true)
        #expect(await follow.waitForExit(timeout: .seconds(60)) == 0, "\(follow.diagnostics)")
        #expect(follow.output.last?.contains(#""count": 400"#) == true)
        await cluster.stop()
    }
}
