import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Testing
import ZeroMQ
import TestSupport
import Foundation

/// A state fetched with `snapshot_chunk`, and the feed's snapshot of a large state, are encoded
/// off the loop (``StateEncode``): the engine goes on taking actions meanwhile, and the reply
/// (or the feed's snapshot) names the version the bytes are at.
@Suite struct StateEncodeTests {
    let writer = HeaderWriter()
    let client: [UInt8] = [0, 1, 2, 3]

    /// The encodings the engine started, run when the test says.
    final class Started {
        var requests: [StateEncode] = []
    }

    /// An engine whose encodings off the loop are kept in `started`; without it, as with no loop.
    func makeEngine(_ started: Started? = nil) -> AuthorityEngine<Counter> {
        let configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        let engine = AuthorityEngine(reactor: Counter(), configuration: configuration, logger: Logger(label: "test", sink: .discard), journaling: false)
        if let started { engine.startStateEncode = { started.requests.append($0) } }
        return engine
    }

    /// An engine that knows its state as large (1 MiB last encoded), at version 1, its ack taken;
    /// `elsewhere`: its loop has a snapshot replica encode the state.
    func makeLargeEngine(_ started: Started, elsewhere: Bool = false) throws -> AuthorityEngine<Counter> {
        let engine = makeEngine(started)
        engine.noteStateBytes(1 << 20)
        engine.encodesElsewhere = elsewhere
        try countUp(engine, seq: 1)
        _ = try replies(engine)
        return engine
    }

    func countUp(_ engine: AuthorityEngine<Counter>, seq: UInt64) throws {
        engine.handleClient([client] + ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(Counter.Action.countUp)).frames(writer), now: 0)
    }

    func fetch(_ engine: AuthorityEngine<Counter>, id: UInt64, version: UInt64? = nil) {
        engine.handleClient([client] + ClientMessage.snapshotChunk(requestID: id, version: version, offset: 0, maxBytes: 1 << 20).frames(writer), now: 0)
    }

    func wholeSnapshot(_ engine: AuthorityEngine<Counter>, id: UInt64, from peer: [UInt8]? = nil) {
        engine.handleClient([peer ?? client] + ClientMessage.snapshot(requestID: id).frames(writer), now: 0)
    }

    func replies(_ engine: AuthorityEngine<Counter>) throws -> [AuthorityReply] {
        try engine.takeOutbox().replies.map { try $0.reply() }
    }

    /// What a snapshot replica hands back for the counter at `count` (its version and action
    /// sequence), and the bytes.
    func replicaEncoding(count: Int) throws -> (done: StateEncode.Done, bytes: [UInt8]) {
        let bytes = try MessagePackEncoder().encode(Counter.State(count: count))
        return (StateEncode.Done(version: UInt64(count), actionSeq: UInt64(count), result: .success(EncodedBytes(bytes))), bytes)
    }

    func done(_ request: StateEncode) -> StateEncode.Done {
        StateEncode.Done(version: request.version, actionSeq: request.actionSeq, result: Result { try request.encode() })
    }

    @Test func theLoopTakesActionsWhileAFetchedStateIsEncodedAndTheReplyNamesItsVersion() throws {
        let started = Started()
        let engine = makeEngine(started)
        try countUp(engine, seq: 1)
        try countUp(engine, seq: 2)
        _ = try replies(engine)

        // Two first-chunk requests: one encoding, at version 2, and no reply until it is done.
        fetch(engine, id: 7)
        fetch(engine, id: 8)
        #expect(try replies(engine) == [])
        #expect(started.requests.map(\.version) == [2])
        #expect(started.requests.map(\.actionSeq) == [2])

        // Meanwhile an action is applied and acknowledged.
        try countUp(engine, seq: 3)
        #expect(try replies(engine) == [.ack(clientSeq: 3, actionSeq: 3, version: 3)])

        // The bytes are of the state at version 2, and both requests are answered with them.
        let request = try #require(started.requests.first)
        let encoded = done(request)
        let bytes = Array(try encoded.result.get())
        #expect(try MessagePackDecoder().decode(Counter.State.self, from: bytes) == Counter.State(count: 2))
        // A fetch's encoding: nothing for the feed.
        #expect(engine.finishStateEncode(encoded, now: 0) == nil)
        let chunk = AuthorityReply.snapshotChunk(requestID: 7, version: 2, actionSeq: 2, app: "counter", totalBytes: UInt64(bytes.count), offset: 0, payload: bytes)
        var second = chunk
        if case .snapshotChunk(_, let version, let actionSeq, let app, let total, let offset, let payload) = chunk {
            second = .snapshotChunk(requestID: 8, version: version, actionSeq: actionSeq, app: app, totalBytes: total, offset: offset, payload: payload)
        }
        #expect(try replies(engine) == [chunk, second])

        // The version is held now: a request naming it is answered at once, without encoding again.
        fetch(engine, id: 9, version: 2)
        #expect(try replies(engine) == [.snapshotChunk(requestID: 9, version: 2, actionSeq: 2, app: "counter", totalBytes: UInt64(bytes.count), offset: 0, payload: bytes)])
        #expect(started.requests.count == 1)

        // A new fetch of the current state encodes version 3.
        fetch(engine, id: 10)
        #expect(try replies(engine) == [])
        #expect(started.requests.map(\.version) == [2, 3])
        let third = done(started.requests[1])
        _ = engine.finishStateEncode(third, now: 0)
        let thirdBytes = Array(try third.result.get())
        #expect(try MessagePackDecoder().decode(Counter.State.self, from: thirdBytes) == Counter.State(count: 3))
        #expect(try replies(engine) == [.snapshotChunk(requestID: 10, version: 3, actionSeq: 3, app: "counter", totalBytes: UInt64(thirdBytes.count), offset: 0, payload: thirdBytes)])
    }

    /// The feed's snapshot of a state whose last encoding reached the threshold is encoded off
    /// the loop: the outbox names the version copied, no second encoding starts while it runs (a
    /// fetch meanwhile joins it), and the bytes come back as the feed's snapshot of that version.
    @Test func aLargeStatesFeedSnapshotIsEncodedOffTheLoopAndComesBackAtItsVersion() throws {
        let started = Started()
        let engine = makeEngine(started)
        let counterBytes = try MessagePackEncoder().encode(Counter.State(count: 1)).count
        engine.encodesOffLoopAbove = counterBytes
        try countUp(engine, seq: 1)
        // The size is not known yet: the first snapshot is encoded on the loop.
        let first = engine.takeOutbox(.init(snapshot: true))
        #expect(first.state.map(Array.init) == (try MessagePackEncoder().encode(Counter.State(count: 1))))
        #expect(first.stateEncoding == nil && started.requests.isEmpty)

        try countUp(engine, seq: 2)
        let second = engine.takeOutbox(.init(snapshot: true, publishedVersion: 1))
        #expect(second.state == nil && second.stateEncoding == .offLoop(version: 2))
        #expect(second.replies.count == 1)
        #expect(started.requests.map(\.version) == [2])

        // Meanwhile: an action is acknowledged, the feed gets nothing new, and a fetch waits for
        // the encoding under way (one at a time).
        try countUp(engine, seq: 3)
        fetch(engine, id: 7)
        let third = engine.takeOutbox(.init(snapshot: true, publishedVersion: 2))
        #expect(third.state == nil && third.stateEncoding == nil)
        #expect(try third.replies.map { try $0.reply() } == [.ack(clientSeq: 3, actionSeq: 3, version: 3)])
        #expect(started.requests.count == 1)

        let encoded = done(started.requests[0])
        let bytes = Array(try encoded.result.get())
        #expect(try MessagePackDecoder().decode(Counter.State.self, from: bytes) == Counter.State(count: 2))
        let snapshot = try #require(engine.finishStateEncode(encoded, now: 0))
        #expect((snapshot.version, snapshot.actionSeq, Array(snapshot.bytes)) == (2, 2, bytes))
        // The fetch arrived at version 3, after its client's ack: version 2 would hide that
        // action, so the fetch waits for an encoding of the current state, started now.
        #expect(try replies(engine) == [])
        #expect(started.requests.map(\.version) == [2, 3])
        let current = done(started.requests[1])
        let currentBytes = Array(try current.result.get())
        #expect(engine.finishStateEncode(current, now: 0) == nil)
        #expect(try replies(engine) == [.snapshotChunk(requestID: 7, version: 3, actionSeq: 3, app: "counter", totalBytes: UInt64(currentBytes.count), offset: 0, payload: currentBytes)])

        // The next one due takes those bytes; the one after starts anew, at the current version.
        #expect(engine.takeOutbox(.init(snapshot: true, publishedVersion: 2)).state.map(Array.init) == currentBytes)
        try countUp(engine, seq: 4)
        #expect(engine.takeOutbox(.init(snapshot: true, publishedVersion: 3)).stateEncoding == .offLoop(version: 4))
        #expect(started.requests.map(\.version) == [2, 3, 4])
    }

    /// A whole `snapshot` reply of a large state is encoded off the loop too, and like a fetch it
    /// is never of a version older than the state the request arrived at: a client that was
    /// acknowledged an action sees it.
    @Test func aLargeStatesWholeSnapshotIsEncodedOffTheLoopAndNeverOlderThanTheRequest() throws {
        let started = Started()
        let engine = try makeLargeEngine(started)

        // The feed's encoding at version 1 is under way; a client is acknowledged version 2 and
        // asks for the whole state, and another asks for it before the action.
        #expect(engine.takeOutbox(.init(snapshot: true)).stateEncoding == .offLoop(version: 1))
        wholeSnapshot(engine, id: 6, from: [9])
        try countUp(engine, seq: 2)
        wholeSnapshot(engine, id: 7)
        #expect(try replies(engine) == [.ack(clientSeq: 2, actionSeq: 2, version: 2)])
        #expect(started.requests.map(\.version) == [1])

        // Version 1's bytes: the feed's, and the reply to the request that arrived at version 1.
        let first = done(started.requests[0])
        let firstBytes = Array(try first.result.get())
        #expect(try engine.finishStateEncode(first, now: 0).map(\.version) == 1)
        #expect(try replies(engine) == [.snapshot(requestID: 6, version: 1, actionSeq: 1, app: "counter", payload: firstBytes)])
        // The other waits for version 2, encoded off the loop as well.
        #expect(started.requests.map(\.version) == [1, 2])
        let second = done(started.requests[1])
        let secondBytes = Array(try second.result.get())
        #expect(try MessagePackDecoder().decode(Counter.State.self, from: secondBytes) == Counter.State(count: 2))
        #expect(engine.finishStateEncode(second, now: 0) == nil)
        #expect(try replies(engine) == [.snapshot(requestID: 7, version: 2, actionSeq: 2, app: "counter", payload: secondBytes)])

        // At the same version the bytes are kept: the next request is answered at once.
        wholeSnapshot(engine, id: 8)
        #expect(try replies(engine) == [.snapshot(requestID: 8, version: 2, actionSeq: 2, app: "counter", payload: secondBytes)])
        #expect(started.requests.count == 2)
        // A small state's whole snapshot is encoded on the loop.
        let small = makeEngine(started)
        try countUp(small, seq: 1)
        _ = try replies(small)
        wholeSnapshot(small, id: 1)
        #expect(try replies(small) == [.snapshot(requestID: 1, version: 1, actionSeq: 1, app: "counter", payload: try MessagePackEncoder().encode(Counter.State(count: 1)))])
        #expect(started.requests.count == 2)
    }

    /// Every encoding of the whole state, on the loop or off it, is timed, and the size of the
    /// last one is a gauge: what an operator watches a large state cost.
    @Test func everyWholeEncodingIsTimedAndTheStatesSizeIsKnown() throws {
        let started = Started()
        let engine = makeEngine(started)
        #expect(engine.currentMetrics().stateEncodeDuration.count == 0 && engine.currentMetrics().dictionary["state_bytes"] == 0)
        try countUp(engine, seq: 1)
        _ = try replies(engine)
        // On the loop: a small state's whole snapshot.
        wholeSnapshot(engine, id: 1)
        let small = try MessagePackEncoder().encode(Counter.State(count: 1))
        #expect(engine.currentMetrics().stateEncodeDuration.count == 1)
        #expect(engine.currentMetrics().dictionary["state_bytes"] == UInt64(small.count))
        // Again at the same version: the bytes kept, no encoding.
        wholeSnapshot(engine, id: 2)
        #expect(engine.currentMetrics().stateEncodeDuration.count == 1)
        // Off the loop: the time the encoding took there.
        try countUp(engine, seq: 2)
        fetch(engine, id: 3)
        let done = StateEncode.Done(version: 2, actionSeq: 2, result: .success(EncodedBytes([0x81, 0xa5] + Array("count".utf8) + [0x02])), nanoseconds: 7_000_000)
        _ = engine.finishStateEncode(done, now: 0)
        var metrics = engine.currentMetrics()
        #expect(metrics.stateEncodeDuration.count == 2)
        #expect(abs(metrics.stateEncodeDuration.sum - 0.007) < 0.001)
        #expect(metrics.dictionary["state_bytes"] == 8)
        // By the replica: counted apart, so an operator sees whether the loop copied its state.
        engine.encodesElsewhere = true
        try countUp(engine, seq: 3)
        fetch(engine, id: 4)
        #expect(engine.takeOutbox().encodeElsewhere == 3)
        _ = engine.finishStateEncode(try replicaEncoding(count: 3).done, now: 0)
        metrics = engine.currentMetrics()
        #expect(metrics.stateEncodeDuration.count == 3)
        #expect([metrics[.stateEncodesOnLoop], metrics[.stateEncodesOffLoop], metrics[.stateEncodesByReplica]] == [1, 1, 1])
    }

    /// Requests that waited for a replica's encoding that could not be arranged get an encoding
    /// of the engine's own, not silence until their timeout.
    @Test func requestsWaitingForAnAbandonedEncodingGetOneOfTheirOwn() throws {
        let started = Started()
        let engine = makeEngine(started)
        engine.noteStateBytes(1 << 20)
        engine.encodesElsewhere = true
        try countUp(engine, seq: 1)
        #expect(engine.takeOutbox(.init(snapshot: true)).stateEncoding == .elsewhere(version: 1))
        fetch(engine, id: 7)
        wholeSnapshot(engine, id: 8)
        engine.abandonStateEncoding(version: 1)
        #expect(started.requests.map(\.version) == [1])
        let encoded = done(started.requests[0])
        let bytes = Array(try encoded.result.get())
        #expect(engine.finishStateEncode(encoded, now: 0) == nil)
        #expect(try replies(engine) == [
            .snapshotChunk(requestID: 7, version: 1, actionSeq: 1, app: "counter", totalBytes: UInt64(bytes.count), offset: 0, payload: bytes),
            .snapshot(requestID: 8, version: 1, actionSeq: 1, app: "counter", payload: bytes),
        ])
    }

    /// Where the loop has a snapshot replica encode the feed's snapshots, the engine starts no
    /// encoding of its own (no copy of its state): the outbox says which version to have
    /// encoded elsewhere, and the bytes the loop hands back are the feed's snapshot. One the
    /// loop could not arrange is abandoned, and the next due starts anew.
    @Test func whereAReplicaEncodesTheFeedTheEngineOnlyWaitsForItsBytes() throws {
        let started = Started()
        let engine = makeEngine(started)
        engine.noteStateBytes(1 << 20)
        engine.encodesOffLoopAbove = 1
        engine.encodesElsewhere = true
        try countUp(engine, seq: 1)
        let first = engine.takeOutbox(.init(snapshot: true))
        #expect(first.state == nil && first.stateEncoding == .elsewhere(version: 1))
        #expect(started.requests.isEmpty)
        // A fetch meanwhile waits for the same bytes.
        fetch(engine, id: 7)
        #expect(try replies(engine) == [])

        let (done, bytes) = try replicaEncoding(count: 1)
        let snapshot = try #require(engine.finishStateEncode(done, now: 0))
        #expect((snapshot.version, Array(snapshot.bytes)) == (1, bytes))
        #expect(try replies(engine) == [.snapshotChunk(requestID: 7, version: 1, actionSeq: 1, app: "counter", totalBytes: UInt64(bytes.count), offset: 0, payload: bytes)])

        try countUp(engine, seq: 2)
        #expect(engine.takeOutbox(.init(snapshot: true, publishedVersion: 1)).stateEncoding == .elsewhere(version: 2))
        engine.abandonStateEncoding(version: 2)
        try countUp(engine, seq: 3)
        let third = engine.takeOutbox(.init(snapshot: true, publishedVersion: 2))
        #expect(third.stateEncoding == .elsewhere(version: 3))
        #expect(started.requests.isEmpty)
    }

    /// Where a snapshot replica encodes the state, a fetch and a whole `snapshot` request are
    /// answered from its bytes too: the engine copies nothing (no encoding of its own started),
    /// and the version asked for is the one the turn leaves, never older than the requests.
    /// A request that arrives while the replica encodes an older version waits for the next.
    @Test func whereAReplicaEncodesTheStateRequestsWaitForItsBytesNeverOlderThanThey() throws {
        let started = Started()
        let engine = try makeLargeEngine(started, elsewhere: true)
        fetch(engine, id: 7)
        wholeSnapshot(engine, id: 8)
        try countUp(engine, seq: 2)
        let first = engine.takeOutbox()
        #expect(first.encodeElsewhere == 2 && first.stateEncoding == nil && first.state == nil)
        #expect(first.replies.count == 1 && started.requests.isEmpty)

        // Arrives at version 3, while version 2 is encoded: joins no encoding of an older state.
        try countUp(engine, seq: 3)
        wholeSnapshot(engine, id: 9)
        let second = engine.takeOutbox()
        #expect(second.encodeElsewhere == nil && second.replies.count == 1)

        let (doneTwo, two) = try replicaEncoding(count: 2)
        #expect(engine.finishStateEncode(doneTwo, now: 0) == nil)
        let third = engine.takeOutbox()
        #expect(try third.replies.map { try $0.reply() } == [
            .snapshotChunk(requestID: 7, version: 2, actionSeq: 2, app: "counter", totalBytes: UInt64(two.count), offset: 0, payload: two),
            .snapshot(requestID: 8, version: 2, actionSeq: 2, app: "counter", payload: two),
        ])
        #expect(third.encodeElsewhere == 3)

        let (doneThree, three) = try replicaEncoding(count: 3)
        #expect(engine.finishStateEncode(doneThree, now: 0) == nil)
        #expect(try replies(engine) == [.snapshot(requestID: 9, version: 3, actionSeq: 3, app: "counter", payload: three)])
        #expect(started.requests.isEmpty)
    }

    /// A request's encoding by the replica serves the feed's snapshot due in the same turn: the
    /// loop is asked for one encoding, and its bytes answer both.
    @Test func theFeedTakesTheReplicasEncodingForARequest() throws {
        let started = Started()
        let engine = try makeLargeEngine(started, elsewhere: true)
        wholeSnapshot(engine, id: 8)
        let outbox = engine.takeOutbox(.init(snapshot: true, publishedVersion: 0))
        #expect(outbox.encodeElsewhere == 1 && outbox.stateEncoding == .elsewhere(version: 1))
        let (done, bytes) = try replicaEncoding(count: 1)
        let snapshot = try #require(engine.finishStateEncode(done, now: 0))
        #expect(snapshot.version == 1 && Array(snapshot.bytes) == bytes)
        #expect(try replies(engine) == [.snapshot(requestID: 8, version: 1, actionSeq: 1, app: "counter", payload: bytes)])
        #expect(started.requests.isEmpty)
    }

    /// An encoding the replica could not make (it stopped, or disagreed with the loop) leaves
    /// no requester to its timeout: the engine encodes the state itself.
    @Test func requestsWhoseReplicaEncodingFailedGetOneOfTheEnginesOwn() throws {
        let started = Started()
        let engine = try makeLargeEngine(started, elsewhere: true)
        fetch(engine, id: 7)
        #expect(engine.takeOutbox().encodeElsewhere == 1)
        #expect(engine.finishStateEncode(StateEncode.Done(version: 1, actionSeq: 1, result: .failure(SnapshotReplica<Counter>.Failure.stopped)), now: 0) == nil)
        #expect(started.requests.map(\.version) == [1])
        let encoded = done(started.requests[0])
        let bytes = Array(try encoded.result.get())
        _ = engine.finishStateEncode(encoded, now: 0)
        #expect(try replies(engine) == [.snapshotChunk(requestID: 7, version: 1, actionSeq: 1, app: "counter", totalBytes: UInt64(bytes.count), offset: 0, payload: bytes)])
    }

    /// A fetch's chunks leave as ranges of the one encoding the engine holds for it, lent to
    /// libzmq, not copied per chunk.
    @Test func aFetchsChunksAreRangesOfTheHeldEncoding() throws {
        let started = Started()
        let engine = try makeLargeEngine(started)
        engine.handleClient([client] + ClientMessage.snapshotChunk(requestID: 7, version: nil, offset: 0, maxBytes: 4).frames(writer), now: 0)
        let encoded = done(started.requests[0])
        let bytes = try encoded.result.get()
        #expect(bytes.count > 4)
        _ = engine.finishStateEncode(encoded, now: 0)
        engine.handleClient([client] + ClientMessage.snapshotChunk(requestID: 8, version: 1, offset: 4, maxBytes: 1 << 20).frames(writer), now: 0)
        let lent = engine.takeOutbox().replies.compactMap { reply -> (EncodedBytes, Range<Int>)? in
            if case .lending(_, let last, let range) = reply { (last, range) } else { nil }
        }
        #expect(lent.map(\.1) == [0 ..< 4, 4 ..< bytes.count])
        #expect(lent.allSatisfy { $0.0 === bytes })
    }

    /// A fetch's encoding under way serves the feed too, unless it is of the version published last.
    @Test func theFeedTakesAFetchsEncodingUnderWay() throws {
        let started = Started()
        let engine = try makeLargeEngine(started)
        fetch(engine, id: 7)
        try countUp(engine, seq: 2)
        #expect(engine.feedState(.init(snapshot: true, publishedVersion: 1)) == nil)
        #expect(engine.takeOutbox(.init(snapshot: true, publishedVersion: 0)).stateEncoding == .offLoop(version: 1))
        #expect(started.requests.map(\.version) == [1])
        let snapshot = try #require(engine.finishStateEncode(done(started.requests[0]), now: 0))
        #expect(snapshot.version == 1)
        #expect(try replies(engine).count == 1)
    }

    /// Below the threshold (1 MiB by default), or where no loop encodes off it, the feed's
    /// snapshot is encoded on the loop, at once.
    @Test func aSmallStatesFeedSnapshotIsEncodedOnTheLoop() throws {
        let started = Started()
        let engine = makeEngine(started)
        for seq: UInt64 in 1 ... 3 {
            try countUp(engine, seq: seq)
            let outbox = engine.takeOutbox(.init(snapshot: true, publishedVersion: seq - 1))
            #expect(outbox.state.map(Array.init) == (try MessagePackEncoder().encode(Counter.State(count: Int(seq)))))
        }
        #expect(started.requests.isEmpty)
        let alone = makeEngine()
        alone.noteStateBytes(1 << 30)
        try countUp(alone, seq: 1)
        #expect(alone.takeOutbox(.init(snapshot: true)).state.map(Array.init) == (try MessagePackEncoder().encode(Counter.State(count: 1))))
    }

    @Test func aFailedEncodingAnswersNothingAndTheNextRequestEncodesAgain() throws {
        struct Broken: Error {}
        let started = Started()
        let engine = makeEngine(started)
        try countUp(engine, seq: 1)
        _ = try replies(engine)
        fetch(engine, id: 7)
        _ = engine.finishStateEncode(StateEncode.Done(version: 1, actionSeq: 1, result: .failure(Broken())), now: 0)
        #expect(try replies(engine) == [])
        fetch(engine, id: 8)
        #expect(started.requests.map(\.version) == [1, 1])
        _ = engine.finishStateEncode(done(started.requests[1]), now: 0)
        #expect(try replies(engine).count == 1)
    }

    @Test func withoutTheLoopTheEngineEncodesAtOnce() throws {
        let engine = makeEngine()
        try countUp(engine, seq: 1)
        _ = try replies(engine)
        fetch(engine, id: 7)
        let bytes = try MessagePackEncoder().encode(Counter.State(count: 1))
        #expect(try replies(engine) == [.snapshotChunk(requestID: 7, version: 1, actionSeq: 1, app: "counter", totalBytes: UInt64(bytes.count), offset: 0, payload: bytes)])
    }

    @Test func aRunningAuthorityAcknowledgesActionsSentAfterAFetchOrASnapshotBeforeAnsweringThem() async throws {
        let context = try ZMQContext()
        let configuration = AuthorityConfiguration.onIPC(app: "catalog", name: "state-encode")
        let node = try AuthorityNode(reactor: Catalog(), configuration: configuration, logger: Logger(label: "test", sink: .discard), context: context)
        let service = Task { try await node.run() }
        // Stopped on every way out, also when an expectation below throws.
        defer { service.cancel() }

        // A state whose encoding takes long enough (200,000 entries) for the action to arrive first.
        let socket = try ZMQSocket(context: context, type: .dealer)
        try socket.set(.linger, 0)
        try socket.connect(configuration.actionsEndpoint)
        let encoder = MessagePackEncoder()
        try socket.send(ClientMessage.action(clientID: "c1", clientSeq: 1, payload: try encoder.encode(Catalog.Action.fill(from: 0, count: 200_000, bytes: 64))).frames(writer))
        #expect(try await Self.reply(socket) == .ack(clientSeq: 1, actionSeq: 1, version: 1))

        // The fetch and then an action: the action is acknowledged while the state is encoded.
        try socket.send(ClientMessage.snapshotChunk(requestID: 7, version: nil, offset: 0, maxBytes: 1 << 20).frames(writer))
        try socket.send(ClientMessage.action(clientID: "c1", clientSeq: 2, payload: try encoder.encode(Catalog.Action.put(key: 1, value: "x"))).frames(writer))
        #expect(try await Self.reply(socket) == .ack(clientSeq: 2, actionSeq: 2, version: 2))
        let reply = try #require(try await Self.reply(socket))
        guard case .snapshotChunk(let id, let version, let actionSeq, _, let total, let offset, let payload) = reply else {
            Issue.record("expected the first chunk, got \(reply)")
            socket.close()
            return
        }
        // The chunk is of the state at the fetch's version, before the put.
        #expect((id, version, actionSeq, offset) == (7, 1, 1, 0))
        #expect(total > UInt64(payload.count))

        // The state is known to be large now: a whole `snapshot` is encoded off the loop as well,
        // at the version it was asked at (after the put), and an action sent after it is
        // acknowledged first.
        try socket.send(ClientMessage.snapshot(requestID: 8).frames(writer))
        try socket.send(ClientMessage.action(clientID: "c1", clientSeq: 3, payload: try encoder.encode(Catalog.Action.put(key: 2, value: "y"))).frames(writer))
        #expect(try await Self.reply(socket) == .ack(clientSeq: 3, actionSeq: 3, version: 3))
        let whole = try #require(try await Self.reply(socket))
        guard case .snapshot(8, let wholeVersion, let wholeActionSeq, _, let state) = whole else {
            Issue.record("expected the whole snapshot, got \(whole)")
            socket.close()
            return
        }
        #expect((wholeVersion, wholeActionSeq) == (2, 2))
        let catalog = try MessagePackDecoder().decode(Catalog.State.self, from: state)
        #expect(catalog.entries.count == 200_000 && catalog.entries[1] == "x" && catalog.entries[2] != "y")
        socket.close()
        service.cancel()
        try await service.value
        #expect(node.failure == nil)
        #expect(context.terminate(timeout: .seconds(10)))
    }

    /// The next reply on `socket` within 60 s, waited for without blocking a thread of the test
    /// process's shared pool (see ``ZMQSocket/receiveMultipart(before:)``).
    private static func reply(_ socket: ZMQSocket) async throws -> AuthorityReply? {
        try await socket.receiveMultipart(before: .now + .seconds(60)).map { try AuthorityReply(frames: $0) }
    }
}
