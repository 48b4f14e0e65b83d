import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorLog
import ReactorWire
import Testing

/// Acks stay numbers in the outbox until they are sent; what leaves must be exactly what the
/// frames would have been, for DEALER and REQ peers, and a journal failure must still turn every
/// held ack (and only the acks) into `unavailable`.
@Suite struct QueuedReplyTests {
    let writer = HeaderWriter()
    let dealer: [UInt8] = [0, 1, 2, 3]
    let req: [UInt8] = [0, 7, 7, 7]

    func engine() -> AuthorityEngine<Counter> {
        AuthorityEngine(reactor: Counter(), configuration: AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: ""),
                        logger: Logger(label: "test", sink: .discard), journaling: false)
    }

    func action(seq: UInt64) throws -> [[UInt8]] {
        ClientMessage.action(clientID: "c1", clientSeq: seq, payload: try MessagePackEncoder().encode(Counter.Action.countUp)).frames(writer)
    }

    @Test func aDealersAckIsQueuedAsNumbersAndAReqPeersWithItsDelimiter() throws {
        let engine = engine()
        engine.handleClient([dealer] + (try action(seq: 1)), now: 0)
        engine.handleClient([req, []] + (try action(seq: 2)), now: 0)
        engine.handleClient([dealer] + (try action(seq: 1)), now: 0)
        let replies = engine.takeOutbox().replies
        #expect(replies == [
            .ack(routingID: dealer, clientSeq: 1, actionSeq: 1, version: 1),
            .frames([req, []] + AuthorityReply.ack(clientSeq: 2, actionSeq: 2, version: 2).frames(writer)),
            .ack(routingID: dealer, clientSeq: 1, actionSeq: 1, version: 1),
        ])
        #expect(replies[0].frames(writer) == [dealer] + AuthorityReply.ack(clientSeq: 1, actionSeq: 1, version: 1).frames(writer))
        #expect(try replies.map { try $0.reply() } == [
            .ack(clientSeq: 1, actionSeq: 1, version: 1), .ack(clientSeq: 2, actionSeq: 2, version: 2), .ack(clientSeq: 1, actionSeq: 1, version: 1),
        ])
        #expect(replies.map(\.routingID) == [dealer, req, dealer])
    }

    @Test func aJournalFailureRefusesEveryHeldAckAndNothingElse() throws {
        struct DiskFull: Error, CustomStringConvertible { var description: String { "No space left on device" } }
        let pong = QueuedReply.frames([dealer] + AuthorityReply.pong(requestID: 9, version: 3, startID: 1, app: "counter").frames(writer))
        let queued: [QueuedReply] = [
            .ack(routingID: dealer, clientSeq: 4, actionSeq: 10, version: 10),
            .frames([req, []] + AuthorityReply.ack(clientSeq: 5, actionSeq: 11, version: 11).frames(writer)),
            pong,
            .acks(routingID: dealer, [AckBatch.Entry(clientSeq: 6, actionSeq: 12, version: 12), AckBatch.Entry(clientSeq: 7, actionSeq: 13, version: 13)]),
        ]
        let sent = queued.map { AuthorityLoop<Counter>.refusingAcks($0, because: DiskFull(), writer: writer) }
        #expect(sent.map(\.count) == [1, 1, 1, 2], "one refusal per ack, in order; the pong unchanged")
        let refusals = [sent[0][0], sent[1][0], sent[3][0], sent[3][1]]
        #expect(refusals.map(\.first) == [dealer, req, dealer, dealer])
        #expect(refusals.map(\.count) == [2, 3, 2, 2])
        for (frames, seq) in zip(refusals.map { Array($0.dropFirst($0[1].isEmpty ? 2 : 1)) }, [UInt64(4), 5, 6, 7]) {
            guard case .error(let ref, let code, let message) = try AuthorityReply(frames: frames) else {
                Issue.record("not an error: \(frames) \(try AuthorityReply(frames: frames))")
                continue
            }
            #expect(ref == seq && code == .unavailable)
            #expect(message.contains("cannot write its journal (No space left on device)"))
        }
        #expect(sent[2] == [pong.frames(writer)])
    }
}
