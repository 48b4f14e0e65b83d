import MessagePack
import ReactorCore
import Testing
@testable import ReactorWire

/// The subscription messages of the workers socket: `subscriber` and `event` from a worker,
/// `subscribe` and `unsubscribe` from the authority.
@Suite struct SubscriptionMessageTests {
    let writer = HeaderWriter()

    @Test func subscriptionMessagesRoundTrip() throws {
        let fromWorker: [WorkerMessage] = [
            .subscriber(kinds: []), .subscriber(kinds: ["quotes", "orders"]),
            .event(run: 7, index: 0, payload: [0x01]), .event(run: .max, index: .max, payload: [0x80]),
        ]
        for message in fromWorker {
            #expect(try WorkerMessage(frames: message.frames(writer)) == message)
        }
        let toWorker: [AuthorityToWorker] = [
            .subscribe(run: 3, id: "quotes/ACME", kind: "quotes", after: nil, payload: [0x81]),
            .subscribe(run: 3, id: "quotes/ACME", kind: "quotes", after: 41, payload: [0x81]),
            .unsubscribe(run: 3),
        ]
        for message in toWorker {
            #expect(try AuthorityToWorker(frames: message.frames(writer)) == message)
        }
    }

    @Test func wrongShapesAreMalformed() {
        func workerCode(_ frames: [[UInt8]]) -> ErrorCode? {
            do {
                _ = try WorkerMessage(frames: frames)
                return nil
            } catch {
                return error.code
            }
        }
        func authorityCode(_ frames: [[UInt8]]) -> ErrorCode? {
            do {
                _ = try AuthorityToWorker(frames: frames)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(workerCode([writer.header("event", { $0.packUInt(1); $0.packUInt(0) }, count: 2)]) == .malformed)
        #expect(workerCode([writer.header("event", { $0.packUInt(1) }, count: 1), [0xc0]]) == .malformed)
        #expect(workerCode([writer.header("event", { $0.packUInt(1); $0.packString("x") }, count: 2), [0xc0]]) == .malformed)
        #expect(workerCode([writer.header("subscriber", { $0.packUInt(1) }, count: 1)]) == .malformed)
        #expect(workerCode([writer.header("subscriber", count: 0)]) == .malformed)
        #expect(authorityCode([writer.header("subscribe", { $0.packUInt(1); $0.packString("i"); $0.packString("k"); $0.packNil() }, count: 4)]) == .malformed)
        #expect(authorityCode([writer.header("subscribe", { $0.packUInt(1); $0.packString("i"); $0.packString("k") }, count: 3), [0xc0]]) == .malformed)
        #expect(authorityCode([writer.header("unsubscribe", count: 0)]) == .malformed)
    }
}
