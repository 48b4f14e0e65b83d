import MessagePack
import ReactorCore
@testable import ReactorWire
import Testing

@Suite struct WireMessageTests {
    let writer = HeaderWriter()

    @Test func clientMessagesRoundTrip() throws {
        let messages: [ClientMessage] = [
            .action(clientID: "c-1", clientSeq: 42, payload: [0x81, 0xa1, 0x61, 0x80]),
            .snapshot(requestID: 7), .ping(requestID: 8), .stats(requestID: 9),
        ]
        for message in messages {
            #expect(try ClientMessage(frames: message.frames(writer)) == message)
        }
    }

    @Test func anActionReadAfterAnotherKeepsItsOwnClientID() throws {
        // The previous action's id is reused only for the very same bytes: a prefix, an
        // extension, one byte changed, a long (heap) and a short (inline) id all read as sent.
        let long = "bench-0F2D6C1E-5B7A-4C39-9E21-7A0D3B8C4F56"
        let ids = [long, "c", "c-1", "c-2", "c-10", String(long.dropLast()), long + "x", "é-client", long]
        for sent in ids {
            for previous in [nil] + ids {
                let frames = ClientMessage.action(clientID: sent, clientSeq: 3, payload: [0xc0]).frames(writer)
                #expect(try ClientMessage(frames: frames[...], reusingClientID: previous) == .action(clientID: sent, clientSeq: 3, payload: [0xc0]))
            }
        }
    }

    @Test func aReplyAfterAnEnvelopeKeepsTheEnvelopeFirst() throws {
        let envelope: [[UInt8]] = [[0x00, 0x6b, 0x8b, 0x45, 0x67], []]
        let ack = AuthorityReply.ack(clientSeq: 1, actionSeq: 2, version: 3)
        #expect(ack.frames(writer, after: envelope[...]) == envelope + ack.frames(writer))
        let snapshot = AuthorityReply.snapshot(requestID: 4, version: 5, actionSeq: 6, app: "counter", payload: [0x80])
        #expect(snapshot.frames(writer, after: envelope[..<1]) == [envelope[0]] + snapshot.frames(writer))
        #expect(snapshot.frames(writer).count == 2)
    }

    @Test func anActionHeaderHasTheDocumentedBytes() {
        let frames = ClientMessage.action(clientID: "c", clientSeq: 1, payload: [0xc0]).frames(writer)
        // [1, "action", "c", 1]
        #expect(frames[0] == [0x94, 0x01, 0xa6] + Array("action".utf8) + [0xa1, 0x63, 0x01])
        #expect(frames[1] == [0xc0])
    }

    @Test func repliesRoundTrip() throws {
        let replies: [AuthorityReply] = [
            .ack(clientSeq: 1, actionSeq: 2, version: 3),
            .snapshot(requestID: 4, version: 5, actionSeq: 6, app: "counter", payload: [0x80]),
            .pong(requestID: 1, version: 99, startID: 0xDEAD_BEEF_0BAD_F00D, app: "counter"),
            .stats(requestID: 2, counters: ["accepted": 10, "malformed": 1]),
            .error(ref: 5, code: .busy, message: "too many"),
        ]
        for reply in replies {
            #expect(try AuthorityReply(frames: reply.frames(writer)) == reply)
        }
    }

    @Test func aPongWithoutStartIDFromAnOlderAuthorityDecodesWithZero() throws {
        let old = writer.header("pong", { $0.packUInt(3); $0.packUInt(99) }, count: 2)
        #expect(try AuthorityReply(frames: [old]) == .pong(requestID: 3, version: 99, startID: 0, app: ""))
        let withStart = writer.header("pong", { $0.packUInt(3); $0.packUInt(99); $0.packUInt(5) }, count: 3)
        #expect(try AuthorityReply(frames: [withStart]) == .pong(requestID: 3, version: 99, startID: 5, app: ""))
        let extended = writer.header("pong", { $0.packUInt(3); $0.packUInt(99); $0.packUInt(5); $0.packString("counter"); $0.packUInt(1) }, count: 5)
        #expect(try AuthorityReply(frames: [extended]) == .pong(requestID: 3, version: 99, startID: 5, app: "counter"))
        let short = writer.header("pong", { $0.packUInt(3) }, count: 1)
        #expect(throws: ProtocolError.self) { try AuthorityReply(frames: [short]) }
    }

    @Test func workerMessagesRoundTrip() throws {
        let job = JobID(actionSeq: 10, effectIndex: 2)
        let messages: [WorkerMessage] = [
            .ready(name: "w1", app: "counter", capacity: 8, kinds: ["a", "b"]),
            .heartbeat,
            .bye,
            .emit(job: job, emitIndex: 3, payload: [0x01]),
            .done(job: job, emitCount: 4),
            .doneWithEmit(job: job, emitCount: 4, payload: [0x03]),
            .failed(job: job, failure: EffectFailure(message: "boom", attempts: 3)),
        ]
        for message in messages {
            #expect(try WorkerMessage(frames: message.frames(writer)) == message)
        }
        let toWorker: [AuthorityToWorker] = [
            .welcome(heartbeatMilliseconds: 1_000), .job(job, kind: "k", payload: [0x02]), .heartbeat(),
            .heartbeat(features: AuthorityFeature.all), .error(ref: 0, code: .unknownWorker, message: "send ready"),
        ]
        for message in toWorker {
            #expect(try AuthorityToWorker(frames: message.frames(writer)) == message)
        }
    }

    @Test func aDoneCarriesTheLastMutationAsASecondFrame() throws {
        let job = JobID(actionSeq: 10, effectIndex: 2)
        let fused = WorkerMessage.doneWithEmit(job: job, emitCount: 2, payload: [0x05])
        let frames = fused.frames(writer)
        // The header of a plain `done`, and the mutation as an `emit`'s payload frame.
        #expect(frames.count == 2)
        #expect(frames[0] == WorkerMessage.done(job: job, emitCount: 2).frames(writer)[0])
        #expect(frames[1] == [0x05])
        // Counting no mutation, a `done` has none to carry; three frames are one too many.
        let none = writer.header("done", { $0.packUInt(10); $0.packUInt(2); $0.packUInt(0) }, count: 3)
        #expect(throws: ProtocolError.self) { try WorkerMessage(frames: [none, [0x05]]) }
        #expect(throws: ProtocolError.self) { try WorkerMessage(frames: frames + [[0x06]]) }
    }

    @Test func aHeartbeatNamesTheAuthorityFeaturesAndIsReadLeniently() throws {
        let named = AuthorityToWorker.heartbeat(features: [AuthorityFeature.doneWithEmit])
        #expect(try WireHeader.read(named.frames(writer)[0], { $0.fieldCount }) == 1)
        #expect(try WireHeader.read(AuthorityToWorker.heartbeat().frames(writer)[0], { $0.fieldCount }) == 0, "what every release sent")
        // Anything after the kind that is not a list of names names nothing, as every release read it.
        let odd = writer.header("heartbeat", { $0.packUInt(7); $0.packString("x") }, count: 2)
        #expect(try AuthorityToWorker(frames: [odd]) == .heartbeat())
    }

    @Test func feedMessagesRoundTrip() throws {
        let job = JobID(actionSeq: 3, effectIndex: 1)
        let messages: [FeedMessage] = [
            .snapshot(version: 1, actionSeq: 2, payload: [0x80]),
            .mutation(version: 2, actionSeq: 3, origin: .sync(index: 0), payload: [0x01]),
            .mutation(version: 3, actionSeq: 3, origin: .async(job: job, emitIndex: 4), payload: [0x02]),
            .mutation(version: 4, actionSeq: 3, origin: .failure(job: job, index: 0), payload: [0x03]),
            .heartbeat(version: 4, actionSeq: 3),
        ]
        for message in messages {
            #expect(try FeedMessage(frames: message.frames(writer)) == message)
        }
    }

    @Test func badHeadersAreTypedProtocolErrors() {
        func code(_ frames: [[UInt8]]) -> ErrorCode? {
            do {
                _ = try ClientMessage(frames: frames)
                return nil
            } catch {
                return error.code
            }
        }
        let v1 = MessagePackValue.uint(1)
        #expect(code([]) == .malformed)
        #expect(code([[0xc1]]) == .malformed)
        #expect(code([[0x01, 0x02]]) == .malformed)
        #expect(code([MessagePackValue.array([.uint(2), .string("ping"), .uint(1)]).pack()]) == .unsupportedVersion)
        #expect(code([MessagePackValue.array([v1, .string("dance"), .uint(1)]).pack()]) == .unknownKind)
        #expect(code([MessagePackValue.array([v1, .string("ping")]).pack()]) == .malformed)
        #expect(code([MessagePackValue.array([v1, .string("ping"), .string("x")]).pack()]) == .malformed)
        #expect(code([MessagePackValue.array([v1, .string("action"), .string("c"), .uint(1)]).pack()]) == .malformed)
        #expect(code([MessagePackValue.array([v1, .string("action"), .string("c"), .uint(0)]).pack(), [0xc0]]) == .malformed)
        #expect(code([MessagePackValue.array([v1, .string("action"), .string(String(repeating: "x", count: 65)), .uint(1)]).pack(), [0xc0]]) == .malformed)
    }

    @Test func feedHeadersWithWrongShapesAreRefused() {
        #expect(throws: ProtocolError.self) { try FeedMessage(frames: [Array("snapshot".utf8), [0x91, 0x01]]) }
        #expect(throws: ProtocolError.self) { try FeedMessage(frames: [Array("weather".utf8), [0x91, 0x01]]) }
        #expect(throws: ProtocolError.self) {
            try FeedMessage(frames: [Array("mutation".utf8), MessagePackValue.array([.uint(1), .uint(1), .uint(1), .string("sideways"), .nil, .uint(0)]).pack(), [0xc0]])
        }
    }
}
