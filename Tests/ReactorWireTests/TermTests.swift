import MessagePack
import ReactorCore
@testable import ReactorWire
import Testing

/// An elected authority's term in `pong` and `welcome`: carried when there is one, absent (and
/// the messages as before) when there is none.
@Suite struct TermTests {
    let writer = HeaderWriter()

    @Test func aPongCarriesTheTermOrNil() throws {
        let elected = AuthorityReply.pong(requestID: 1, version: 9, startID: 5, app: "counter", term: 42)
        #expect(try AuthorityReply(frames: elected.frames(writer)) == elected)
        let alone = AuthorityReply.pong(requestID: 1, version: 9, startID: 5, app: "counter")
        #expect(try AuthorityReply(frames: alone.frames(writer)) == alone)
        // A pong of the release before terms (six fields) has none.
        let older = writer.header("pong", { w in
            w.packUInt(1); w.packUInt(9); w.packUInt(5); w.packString("counter"); w.packUInt(1); w.packArrayHeader(0)
        }, count: 6)
        #expect(try AuthorityReply(frames: [older]) == alone)
        let bad = writer.header("pong", { w in
            w.packUInt(1); w.packUInt(9); w.packUInt(5); w.packString("counter"); w.packUInt(1); w.packArrayHeader(0); w.packString("x")
        }, count: 7)
        #expect(throws: ProtocolError.self) { try AuthorityReply(frames: [bad]) }
    }

    @Test func aWelcomeCarriesTheTermOnlyWhenElected() throws {
        let alone = AuthorityToWorker.welcome(heartbeatMilliseconds: 500)
        let frames = alone.frames(writer)
        #expect(try WireHeader.read(frames[0], { $0.fieldCount }) == 1, "the form workers of the release before terms read")
        #expect(try AuthorityToWorker(frames: frames) == alone)
        let elected = AuthorityToWorker.welcome(heartbeatMilliseconds: 500, term: 7)
        #expect(try WireHeader.read(elected.frames(writer)[0], { $0.fieldCount }) == 2)
        #expect(try AuthorityToWorker(frames: elected.frames(writer)) == elected)
    }
}
