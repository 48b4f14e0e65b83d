import MessagePack
import ReactorCore
import Testing
@testable import ReactorBus

/// The hand-written headers must be byte for byte what msgpack-c writes, and read exactly what
/// the general parser reads; anything unusual must go to the general parser.
@Suite struct FixedHeaderTests {
    let writer = HeaderWriter()
    /// Every boundary of MessagePack's unsigned integer forms.
    let numbers: [UInt64] = [0, 1, 127, 128, 255, 256, 65_535, 65_536, 4_294_967_295, 4_294_967_296, .max]

    @Test func integerHeadersAreWhatMsgpackCWrites() {
        for a in numbers {
            for b in [numbers[0], numbers[5], numbers[10]] {
                #expect(FixedHeader.header("ack", a, b, a) == writer.header("ack", { $0.packUInt(a); $0.packUInt(b); $0.packUInt(a) }, count: 3))
                #expect(FixedHeader.feed(a, b) == writer.feedHeader(count: 2) { $0.packUInt(a); $0.packUInt(b) })
            }
        }
    }

    @Test func stringHeadersAreWhatMsgpackCWrites() {
        for length in [1, 31, 32, 64, 255, 256, 70_000] {
            let text = String(repeating: "é", count: length / 2) + String(repeating: "x", count: length % 2)
            for seq in [numbers[1], numbers[4], numbers[10]] {
                #expect(FixedHeader.action(clientID: text, seq: seq) == writer.header("action", { $0.packString(text); $0.packUInt(seq) }, count: 2))
                #expect(FixedHeader.job(actionSeq: seq, effectIndex: 7, kind: text)
                        == writer.header("job", { $0.packUInt(seq); $0.packUInt(7); $0.packString(text) }, count: 3))
            }
        }
    }

    @Test func theFastPathReadsWhatTheGeneralPathReads() throws {
        for a in numbers {
            let reply = AuthorityReply.ack(clientSeq: a, actionSeq: a / 3, version: a / 7)
            #expect(try AuthorityReply(frames: reply.frames(writer)) == reply)
            if a >= 1 {
                let action = ClientMessage.action(clientID: "client-\(a)", clientSeq: a, payload: [0x80])
                #expect(ClientMessage.fixedAction(action.frames(writer)[0]) != nil)
                #expect(try ClientMessage(frames: action.frames(writer)) == action)
            }
            let index = UInt32(truncatingIfNeeded: a)
            let job = JobID(actionSeq: a, effectIndex: index)
            for message in [WorkerMessage.emit(job: job, emitIndex: index, payload: [1]), .done(job: job, emitCount: index)] {
                #expect(WorkerMessage.fixed(message.frames(writer)) == message)
                #expect(try WorkerMessage(frames: message.frames(writer)) == message)
            }
            let toWorker = AuthorityToWorker.job(job, kind: "slowIncrease", payload: [0x80])
            #expect(try AuthorityToWorker(frames: toWorker.frames(writer)) == toWorker)
            let feed = FeedMessage.snapshot(version: a, actionSeq: a / 2, payload: [0x80])
            #expect(try FeedMessage(frames: feed.frames(writer)) == feed)
        }
    }

    @Test func unusualHeadersGoToTheGeneralPath() throws {
        func header(_ values: [MessagePackValue]) -> [UInt8] { MessagePackValue.array(values).pack() }
        // Wrong version, wrong kind, an extra field, a signed or zero seq, an empty or too long id.
        let refused: [[UInt8]] = [
            header([.uint(2), .string("action"), .string("c"), .uint(1)]),
            header([.uint(1), .string("actions"), .string("c"), .uint(1)]),
            header([.uint(1), .string("action"), .string("c"), .uint(1), .nil]),
            header([.uint(1), .string("action"), .string("c"), .int(-1)]),
            header([.uint(1), .string("action"), .string("c"), .uint(0)]),
            header([.uint(1), .string("action"), .string(""), .uint(1)]),
            header([.uint(1), .string("action"), .string(String(repeating: "c", count: 65)), .uint(1)]),
            header([.uint(1), .string("action"), .string("c"), .uint(1)]) + [0x00],
            [0x94, 0x01, 0xa6] + Array("action".utf8) + [0xa2, 0xff, 0xfe, 0x01],
            Array(header([.uint(1), .string("action"), .string("c"), .uint(300)]).dropLast()),
        ]
        for frame in refused {
            #expect(ClientMessage.fixedAction(frame) == nil)
            // The general path decides, as it always did: some of these are errors, none crash.
            _ = try? ClientMessage(frames: [frame, [0x80]])
        }
        #expect(throws: ProtocolError.self) { try ClientMessage(frames: [refused[0], [0x80]]) }
        #expect(throws: ProtocolError.self) { try ClientMessage(frames: [refused[4], [0x80]]) }
        #expect(WorkerMessage.fixed([header([.uint(1), .string("done"), .uint(1), .uint(1 << 32), .uint(0)])]) == nil)
        #expect(WorkerMessage.fixed([header([.uint(1), .string("emit"), .uint(1), .uint(0), .uint(0)])]) == nil)
    }
}
