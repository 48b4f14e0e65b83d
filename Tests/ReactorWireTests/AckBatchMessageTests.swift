import MessagePack
@testable import ReactorWire
import Testing

/// An `acks` message carries a client's acks exactly, in order, in one body frame within its
/// byte bound; the `features` request and reply name what each side does; anything else in
/// their place is a typed `malformed` error.
@Suite struct AckBatchMessageTests {
    let writer = HeaderWriter()

    var entries: [AckBatch.Entry] {
        [AckBatch.Entry(clientSeq: 1, actionSeq: 1, version: 1),
         AckBatch.Entry(clientSeq: 2, actionSeq: 0, version: 77),
         AckBatch.Entry(clientSeq: .max, actionSeq: .max, version: .max)]
    }

    @Test func acksAndFeaturesRoundTrip() throws {
        for count in 1 ... entries.count {
            let reply = AuthorityReply.acks(Array(entries.prefix(count)))
            let frames = reply.frames(writer)
            #expect(frames.count == 2)
            #expect(try AuthorityReply(frames: frames) == reply)
        }
        for features in [[], ClientFeature.all, ["acks", "something_later"]] {
            let request = ClientMessage.features(requestID: 1 << 63 | 5, features: features)
            #expect(try ClientMessage(frames: request.frames(writer)) == request)
            let reply = AuthorityReply.features(requestID: 9, features: features)
            #expect(try AuthorityReply(frames: reply.frames(writer)) == reply)
        }
        #expect(ClientFeature.all == ["acks"] && AuthorityFeature.forClients == ["ack_batches"])
    }

    @Test func theHeaderCountsTheAcksAndTheBodyIsAnArrayOfTriples() throws {
        let frames = AuthorityReply.acks(Array(entries.prefix(2))).frames(writer)
        #expect(frames[0] == [0x93, 0x01, 0xA4] + Array("acks".utf8) + [0x02])
        // [[1, 1, 1], [2, 0, 77]]
        #expect(frames[1] == [0x92, 0x93, 0x01, 0x01, 0x01, 0x93, 0x02, 0x00, 0x4D])
        let request = ClientMessage.features(requestID: 3, features: ["acks"]).frames(writer)
        #expect(request == [[0x94, 0x01, 0xA8] + Array("features".utf8) + [0x03, 0x91, 0xA4] + Array("acks".utf8)])
    }

    @Test func theLongestBatchOfTheLargestAcksFitsItsBound() {
        let largest = AckBatch.Entry(clientSeq: .max, actionSeq: .max, version: .max)
        let body = AuthorityReply.acks(Array(repeating: largest, count: AckBatch.maxCount)).frames(writer)[1]
        #expect(body.count <= AckBatch.maxBodyBytes)
        #expect(AckBatch.bodyHeaderBytes + (AckBatch.maxCount + 1) * AckBatch.maxEntryBytes > AckBatch.maxBodyBytes, "one more would not fit")
        #expect(AckBatch.maxCount == 146)
    }

    @Test func aMalformedAcksMessageIsATypedError() {
        let header = { countHeader("acks", $0) }, element = bodyOfOne
        let body = AuthorityReply.acks(entries).frames(writer)[1]
        let wrongShapes: [[[UInt8]]] = [
            [header(3)],                                   // no body
            [header(3), body, [0x90]],                     // a frame too many
            [header(0), [0x90]],                           // no ack
            [header(2), body],                             // the count disagrees with the body
            [header(4), body],
            [header(1), [0xC1]],                           // not MessagePack
            [header(3), body + [0x00]],                    // trailing bytes
            [header(1), [0x81, 0x01, 0x02]],               // a map, not an array
            [header(1), element { $0.packArrayHeader(2); $0.packUInt(1); $0.packUInt(1) }],
            [header(1), element { $0.packArrayHeader(4); $0.packUInt(1); $0.packUInt(1); $0.packUInt(1); $0.packUInt(1) }],
            [header(1), element { $0.packArrayHeader(3); $0.packUInt(0); $0.packUInt(1); $0.packUInt(1) }],   // client_seq 0
            [header(1), element { $0.packArrayHeader(3); $0.packInt(-1); $0.packUInt(1); $0.packUInt(1) }],
            [header(1), element { $0.packArrayHeader(3); $0.packUInt(1); $0.packString("1"); $0.packUInt(1) }],
            [header(1), element { $0.packArrayHeader(3); $0.packUInt(1); $0.packUInt(1); $0.packNil() }],
            [writer.header("acks", count: 0), body],       // no count
        ]
        expectMalformed(wrongShapes) { frames throws(ProtocolError) in try AuthorityReply(frames: frames) }
        // A `features` request or reply is a request id and an array of strings, in one frame.
        let notStrings = writer.header("features", { $0.packUInt(1); $0.packArrayHeader(1); $0.packUInt(1) }, count: 2)
        let noList = writer.header("features", { $0.packUInt(1) }, count: 1)
        let threeFields = writer.header("features", { $0.packUInt(1); $0.packArrayHeader(0); $0.packUInt(1) }, count: 3)
        expectMalformed([[notStrings], [noList], [threeFields], ClientMessage.features(requestID: 1, features: []).frames(writer) + [[0x90]]]) {
            frames throws(ProtocolError) in try ClientMessage(frames: frames)
        }
        for frames in [[notStrings], [noList], [threeFields]] {
            #expect(throws: ProtocolError.self) { try AuthorityReply(frames: frames) }
        }
    }
}
