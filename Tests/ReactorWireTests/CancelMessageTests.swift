import ReactorCore
import Testing
@testable import ReactorWire

/// The authority's `cancel` to a worker, and the feed's `cancelled` mutation origin.
@Suite struct CancelMessageTests {
    let writer = HeaderWriter()

    @Test func cancelRoundTripsAsTwoHeaderFields() throws {
        let job = JobID(actionSeq: 70_000, effectIndex: 3)
        let frames = AuthorityToWorker.cancel(job).frames(writer)
        #expect(frames.count == 1)
        #expect(try AuthorityToWorker(frames: frames) == .cancel(job))
        let (kind, fields) = try WireHeader.read(frames[0]) { ($0.kind, $0.fieldCount) }
        #expect(kind == "cancel")
        #expect(fields == 2)
    }

    @Test func aCancelOfTheWrongShapeIsMalformed() {
        let extraField = writer.header("cancel", { $0.packUInt(1); $0.packUInt(0); $0.packUInt(9) }, count: 3)
        #expect(throws: ProtocolError.self) { try AuthorityToWorker(frames: [extraField]) }
        let good = AuthorityToWorker.cancel(JobID(actionSeq: 1, effectIndex: 0)).frames(writer)
        #expect(throws: ProtocolError.self) { try AuthorityToWorker(frames: good + [[0x01]]) }
    }

    @Test func aCancelledMutationKeepsItsJobOnTheFeed() throws {
        let message = FeedMessage.mutation(version: 9, actionSeq: 4, origin: .cancelled(job: JobID(actionSeq: 4, effectIndex: 2), index: 1), payload: [0xc0])
        #expect(try FeedMessage(frames: message.frames(writer)) == message)
    }
}
