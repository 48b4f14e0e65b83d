import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorLog
import ReactorWire
import Testing

/// The acks a turn owes a client that asked for `acks` messages go as one reply, in order, at
/// the place of its first; other replies to that client keep their place between them; a
/// client that never asked (or asked on another connection, or stopped asking) gets an `ack` each.
@Suite struct AuthorityEngineAckBatchTests {
    let writer = HeaderWriter()
    let alice: [UInt8] = [0, 1, 1, 1, 1]
    let bob: [UInt8] = [0, 2, 2, 2, 2]
    let countUp: [UInt8]

    init() throws { countUp = try MessagePackEncoder().encode(Counter.Action.countUp) }

    func makeEngine(readers: [[UInt8]]) throws -> AuthorityEngine<Counter> {
        let configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        let engine = AuthorityEngine(reactor: Counter(), configuration: configuration, logger: Logger(label: "authority", sink: .discard), journaling: false)
        for (index, reader) in readers.enumerated() {
            engine.handleClient([reader] + ClientMessage.features(requestID: UInt64(index + 1), features: ClientFeature.all).frames(writer), now: 0)
            #expect(try engine.takeOutbox().replies.map { try $0.reply() } == [.features(requestID: UInt64(index + 1), features: ["ack_batches"])])
        }
        return engine
    }

    func action(_ peer: [UInt8], _ seq: UInt64, client: String = "c", to engine: AuthorityEngine<Counter>) {
        engine.handleClient([peer] + ClientMessage.action(clientID: client, clientSeq: seq, payload: countUp).frames(writer), now: 0)
    }

    func ack(_ seq: UInt64, _ actionSeq: UInt64) -> AckBatch.Entry {
        AckBatch.Entry(clientSeq: seq, actionSeq: actionSeq, version: actionSeq)
    }

    @Test func aTurnsAcksForAReaderGoAsOneReplyInOrder() throws {
        let engine = try makeEngine(readers: [alice])
        for seq: UInt64 in 1 ... 5 { action(alice, seq, to: engine) }
        let outbox = engine.takeOutbox()
        #expect(outbox.replies == [.acks(routingID: alice, (1 ... 5).map { ack($0, $0) })])
        #expect(outbox.acks == 5, "each ack still counts (the loop measures their wait)")
        let frames = outbox.replies[0].frames(writer)
        #expect(frames[0] == alice && frames.count == 3)
        #expect(try AuthorityReply(frames: Array(frames.dropFirst())) == .acks((1 ... 5).map { ack($0, $0) }))
        // A turn with one ack sends it as an `ack`, as to any client.
        action(alice, 6, to: engine)
        #expect(engine.takeOutbox().replies == [.ack(routingID: alice, clientSeq: 6, actionSeq: 6, version: 6)])
    }

    @Test func aClientThatDidNotAskGetsAnAckEach() throws {
        let engine = try makeEngine(readers: [alice])
        for seq: UInt64 in 1 ... 3 { action(bob, seq, client: "b", to: engine) }
        #expect(engine.takeOutbox().replies == (1 ... 3).map { .ack(routingID: bob, clientSeq: $0, actionSeq: $0, version: $0) })
    }

    @Test func eachReadersBatchSitsWhereItsFirstAckWas() throws {
        let engine = try makeEngine(readers: [alice, bob])
        let carol: [UInt8] = [0, 3, 3, 3, 3]
        action(alice, 1, client: "a", to: engine)
        action(carol, 1, client: "c", to: engine)
        action(bob, 1, client: "b", to: engine)
        action(alice, 2, client: "a", to: engine)
        action(bob, 2, client: "b", to: engine)
        action(carol, 2, client: "c", to: engine)
        #expect(engine.takeOutbox().replies == [
            .acks(routingID: alice, [ack(1, 1), ack(2, 4)]),
            .ack(routingID: carol, clientSeq: 1, actionSeq: 2, version: 2),
            .acks(routingID: bob, [ack(1, 3), ack(2, 5)]),
            .ack(routingID: carol, clientSeq: 2, actionSeq: 6, version: 6),
        ])
    }

    @Test func anotherReplyToTheClientClosesItsBatch() throws {
        let engine = try makeEngine(readers: [alice, bob])
        action(alice, 1, to: engine)
        action(bob, 1, client: "b", to: engine)
        action(alice, 2, to: engine)
        engine.handleClient([alice] + ClientMessage.stats(requestID: 1 << 63 | 9).frames(writer), now: 0)
        action(alice, 3, to: engine)
        action(bob, 2, client: "b", to: engine)
        action(alice, 4, to: engine)
        // A resend of an accepted action is acked again, in its place in the batch.
        action(alice, 1, to: engine)
        let replies = engine.takeOutbox().replies
        #expect(replies.count == 4)
        #expect(replies[0] == .acks(routingID: alice, [ack(1, 1), ack(2, 3)]))
        #expect(replies[1] == .acks(routingID: bob, [ack(1, 2), ack(2, 5)]), "the stats reply to alice does not close bob's batch")
        guard case .stats(let id, _)? = try? replies[2].reply() else {
            Issue.record("expected the stats reply third, got \(replies[2])")
            return
        }
        #expect(id == 1 << 63 | 9 && replies[2].routingID == alice)
        #expect(replies[3] == .acks(routingID: alice, [ack(3, 4), ack(4, 6), ack(1, 1)]))
    }

    @Test func aBatchClosesAtItsBoundAndTheRestGoInTheNext() throws {
        let engine = try makeEngine(readers: [alice])
        let count = AckBatch.maxCount * 2 + 1
        for seq in 1 ... UInt64(count) { action(alice, seq, to: engine) }
        let replies = engine.takeOutbox().replies
        #expect(replies.map(\.acks.count) == [AckBatch.maxCount, AckBatch.maxCount, 1])
        #expect(replies.flatMap(\.acks) == (1 ... UInt64(count)).map { ack($0, $0) })
        #expect(replies.last == .ack(routingID: alice, clientSeq: UInt64(count), actionSeq: UInt64(count), version: UInt64(count)))
        for reply in replies { #expect(reply.frames(writer).last?.count ?? .max <= AckBatch.maxBodyBytes) }
    }

    @Test func aFeaturesRequestWithoutAcksOrFromAReqPeerGetsAckEach() throws {
        let engine = try makeEngine(readers: [alice])
        engine.handleClient([alice] + ClientMessage.features(requestID: 7, features: ["something_later"]).frames(writer), now: 0)
        #expect(try engine.takeOutbox().replies.map { try $0.reply() } == [.features(requestID: 7, features: ["ack_batches"])])
        for seq: UInt64 in 1 ... 2 { action(alice, seq, to: engine) }
        #expect(engine.takeOutbox().replies == (1 ... 2).map { .ack(routingID: alice, clientSeq: $0, actionSeq: $0, version: $0) })

        // A REQ peer reads one reply per request: it is told the authority does nothing extra for it.
        let req: [UInt8] = [0, 9, 9, 9, 9]
        engine.handleClient([req, []] + ClientMessage.features(requestID: 8, features: ClientFeature.all).frames(writer), now: 0)
        let replies = engine.takeOutbox().replies
        #expect(replies.map(\.envelope) == [[req, []]])
        #expect(try replies.map { try $0.reply() } == [.features(requestID: 8, features: [])])
    }
}

/// The set of recent ack readers keeps those used in each round and forgets the rest.
@Suite struct RecentSetTests {
    @Test func anElementUsedInEachRoundStaysAndOneNotUsedIsForgotten() {
        var set = RecentSet<String>(capacity: 2)
        set.insert("a")
        set.insert("b")
        set.insert("c")   // a new round: a and b are the previous one
        #expect(set.count == 3)
        let foundInThePreviousRound = set.contains("a")
        #expect(foundInThePreviousRound, "found in the previous round, it moves to this one")
        set.insert("d")   // c, a fill this round: they become the previous one, b is gone
        let forgotten = set.contains("b")
        #expect(!forgotten)
        let kept = [set.contains("a"), set.contains("c"), set.contains("d")]
        #expect(kept == [true, true, true])
        #expect(set.count <= 2 * set.capacity)
        set.remove("a")
        let afterRemoval = [set.contains("a"), set.contains("c")]
        #expect(afterRemoval == [false, true])
        var empty = RecentSet<Int>(capacity: 0)
        let foundInEmpty = empty.contains(0)
        #expect(empty.isEmpty && !foundInEmpty && empty.capacity == 1)
    }
}
