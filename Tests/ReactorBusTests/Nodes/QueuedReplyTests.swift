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
        ]
        let sent = queued.map { AuthorityLoop<Counter>.refusingAck($0, because: DiskFull(), writer: writer) }
        #expect(sent[0].first == dealer && sent[0].count == 2)
        #expect(Array(sent[1].prefix(2)) == [req, []] && sent[1].count == 3)
        for (frames, seq) in [(Array(sent[0].dropFirst()), UInt64(4)), (Array(sent[1].dropFirst(2)), 5)] {
            guard case .error(let ref, let code, let message) = try AuthorityReply(frames: frames) else {
                Issue.record("not an error: \(frames)")
                continue
            }
            #expect(ref == seq && code == .unavailable)
            #expect(message.contains("cannot write its journal (No space left on device)"))
        }
        #expect(sent[2] == pong.frames(writer))
    }
}
