import Foundation
import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorWire
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// Bad input and faults against the real authority binary: it answers or drops and counts,
/// keeps serving, and its state does not change.
@Suite(.spawnsProcesses, .serialized) struct HostileInputTests {
    typealias RawPeer = RawDealer

    let writer = HeaderWriter()

    func errorCode(_ frames: [[UInt8]]?) -> ErrorCode? {
        guard let frames, case .error(_, let code, _) = try? AuthorityReply(frames: frames) else { return nil }
        return code
    }

    @Test func garbageOnTheActionsSocketIsAnsweredCountedAndChangesNothing() async throws {
        let cluster = try await ClusterProcesses(extra: ["--max-message-bytes", "65536"])
        let peer = try RawPeer(cluster.endpoints.actions)
        let cases: [([[UInt8]], ErrorCode)] = [
            ([Array("definitely not msgpack".utf8)], .malformed),
            ([[0xc1]], .malformed),
            ([[0x94, 0x01]], .malformed),
            ([MessagePackValue.array([.uint(99), .string("ping"), .uint(1)]).pack()], .unsupportedVersion),
            ([MessagePackValue.array([.uint(1), .string("teleport"), .uint(1)]).pack()], .unknownKind),
            ([MessagePackValue.array([.uint(1), .string("ping"), .uint(1)]).pack(), [0x00], [0x00]], .malformed),
            (ClientMessage.action(clientID: "x", clientSeq: 1, payload: MessagePackValue.map([(.string("explode"), .map([]))]).pack()).frames(writer), .badAction),
        ]
        for (frames, code) in cases {
            try peer.send(frames)
            #expect(errorCode(try peer.receive()) == code)
        }
        // Too large: answered too_large with its client_seq, counted, nothing applied.
        try peer.send(ClientMessage.action(clientID: "x", clientSeq: 2, payload: [UInt8](repeating: 0xc0, count: 100_000)).frames(writer))
        #expect(errorCode(try peer.receive()) == .tooLarge)
        let stats = try await cluster.stats()
        #expect(stats["version"] == 0)
        #expect(stats["action_seq"] == 0)
        #expect(stats["malformed"] == 4)
        #expect(stats["unsupported_version"] == 1)
        #expect(stats["unknown_kind"] == 1)
        #expect(stats["bad_actions"] == 1)
        #expect(stats["messages_too_large"] == 1)
        // And it keeps serving.
        let sent = try await cluster.send([#"{"countUp":{}}"#], repeat: 3)
        #expect(sent.status == 0)
        #expect(try await cluster.stats()["version"] == 3)
        await cluster.stop()
    }

    @Test func bogusWorkerMessagesAreDroppedAndCounted() async throws {
        let cluster = try await ClusterProcesses()
        // Its effect takes long enough that the rogue's messages are all handled before it ends.
        let honest = try cluster.addWorker(["--effect-delay", "8"])
        try await cluster.waitForWorkers(1)
        let sent = try await cluster.send([#"{"countUpAsync":{}}"#], repeat: 1)
        #expect(sent.status == 0)
        let rogue = try RawPeer(cluster.endpoints.workers)
        let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
        try rogue.send([[0xde, 0xad]])
        #expect(errorCode(try rogue.receive()) == .malformed)
        try rogue.send(WorkerMessage.emit(job: JobID(actionSeq: 1, effectIndex: 0), emitIndex: 0, payload: increase).frames(writer))
        #expect(errorCode(try rogue.receive()) == .unknownWorker)
        try rogue.send(WorkerMessage.ready(name: "rogue", app: "counter", capacity: 1, kinds: ["nothing-real"]).frames(writer))
        #expect(try rogue.receive().flatMap { try? AuthorityToWorker(frames: $0) } == .welcome(heartbeatMilliseconds: 500))
        // The job belongs to the honest worker: the rogue's DONE and emits are dropped.
        try rogue.send(WorkerMessage.emit(job: JobID(actionSeq: 1, effectIndex: 0), emitIndex: 0, payload: increase).frames(writer))
        try rogue.send(WorkerMessage.done(job: JobID(actionSeq: 1, effectIndex: 0), emitCount: 1).frames(writer))
        try rogue.send(WorkerMessage.done(job: JobID(actionSeq: 77, effectIndex: 0), emitCount: 1).frames(writer))
        var stats = try await WireProbe(actions: cluster.endpoints.actions).stats(within: .seconds(5)) { $0["foreign_reports"] == 3 }
        #expect(stats["version"] == 0, "the rogue's emit for another worker's job was applied")
        #expect(stats["foreign_reports"] == 3)
        #expect(stats["malformed"] == 1)
        #expect(stats["unknown_worker_messages"] == 1)
        // The honest worker's result still counts, once.
        stats = try await WireProbe(actions: cluster.endpoints.actions).stats(within: .seconds(30)) { $0["version"] == 1 && $0["open_jobs"] == 0 }
        #expect(stats["version"] == 1, "\(honest.diagnostics)")
        await cluster.stop()
    }

    @Test func aStalledObserverDoesNotSlowTheAuthorityAndResyncsWhenItWakes() async throws {
        let cluster = try await ClusterProcesses()
        let observer = try ChildProcess.node(["observe", "--app", "counter", "--feed", cluster.endpoints.feed, "--actions", cluster.endpoints.actions, "--json"], name: "observer")
        #expect(await observer.waitForLine { $0.contains("\"version\"") } != nil)
        observer.signal(SIGSTOP)
        let sent = try await cluster.send([#"{"countUp":{}}"#], repeat: 20_000, concurrency: 256)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        #expect(try await cluster.stats()["version"] == 20_000)
        observer.signal(SIGCONT)
        #expect(await observer.waitForLine(timeout: .seconds(20)) { $0 == #"{"version":20000,"state":{"count":20000}}"# } != nil, "\(observer.diagnostics)")
        observer.signal(SIGTERM)
        await observer.waitForExit()
        await cluster.stop()
    }

    @Test func aHungWorkersJobTimesOutAndRunsElsewhere() async throws {
        let cluster = try await ClusterProcesses(extra: ["--job-timeout", "1"])
        try cluster.addWorker(["--effect-delay", "600", "--effect-timeout", "900", "--name", "hung"])
        try await cluster.waitForWorkers(1)
        let sent = try await cluster.send([#"{"countUpAsync":{}}"#], repeat: 1)
        #expect(sent.status == 0)
        try cluster.addWorker(["--name", "healthy"])
        var stats: [String: UInt64] = [:]
        let deadline = ContinuousClock.now + .seconds(20)
        // Applied and ended: a worker may send the job's emit and its done in two messages,
        // and a stats request can come between them.
        while stats["version"] != 1 || stats["open_jobs"] != 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            stats = try await cluster.stats()
        }
        #expect(stats["version"] == 1)
        #expect(stats["jobs_redispatched"] ?? 0 >= 1)
        #expect(stats["open_jobs"] == 0)
        await cluster.stop()
    }

    @Test func aFloodingClientIsToldBusyWhileOthersAreServed() async throws {
        let cluster = try await ClusterProcesses(extra: ["--max-in-flight", "5"])
        try cluster.addWorker(["--effect-delay", "3", "--concurrency", "64"])
        try await cluster.waitForWorkers(1)
        // --busy-timeout 0: fail at the first busy instead of waiting for capacity.
        let flood = try await cluster.send([#"{"countUpAsync":{}}"#], repeat: 50, concurrency: 50, name: "flood", extra: ["--busy-timeout", "0"])
        #expect(flood.status == 1)
        #expect(flood.process.diagnostics.contains("busy"))
        #expect(flood.summary?.contains(#""acked":5,"#) == true, "\(flood.summary ?? "")")
        let other = try await cluster.send([#"{"countUp":{}}"#], repeat: 10, name: "polite")
        #expect(other.status == 0)
        #expect(try await cluster.stats()["actions_busy"] == 45)
        await cluster.stop()
    }
}
