import MessagePack
import ReactorCore
@testable import ReactorWire
import Testing

/// A `jobs` message carries its jobs exactly, in order, in one body frame; a worker's
/// `features` names what it reads; anything else in their place is a typed `malformed` error.
@Suite struct JobBatchMessageTests {
    let writer = HeaderWriter()

    var entries: [JobBatch.Entry] {
        [JobBatch.Entry(job: JobID(actionSeq: 1, effectIndex: 0), kind: "slowIncrease", payload: [0xA4, 0x73, 0x6C, 0x6F, 0x77]),
         JobBatch.Entry(job: JobID(actionSeq: .max, effectIndex: .max), kind: "slowIncrease", payload: []),
         JobBatch.Entry(job: JobID(actionSeq: 2, effectIndex: 7), kind: "é", payload: Array(repeating: 9, count: 70_000))]
    }

    @Test func jobsAndFeaturesRoundTrip() throws {
        for count in 1 ... entries.count {
            let message = AuthorityToWorker.jobs(Array(entries.prefix(count)))
            let frames = message.frames(writer)
            #expect(frames.count == 2)
            #expect(try AuthorityToWorker(frames: frames) == message)
        }
        for (features, limit) in [([], UInt64(1_024)), (WorkerFeature.all, 1 << 20), (["jobs", "something_later"], .max)] {
            let message = WorkerMessage.features(features, maxMessageBytes: limit)
            #expect(try WorkerMessage(frames: message.frames(writer)) == message)
        }
    }

    /// A reader that hands the array back reads the next batch into the same storage; a
    /// malformed batch leaves it empty, its storage still there.
    @Test func aBatchReadIntoTheSpareArrayReusesItsStorage() throws {
        let many = (0 ..< 100).map { JobBatch.Entry(job: JobID(actionSeq: UInt64($0), effectIndex: 0), kind: "k", payload: [UInt8($0)]) }
        var spare: [JobBatch.Entry] = []
        let first = try AuthorityToWorker(frames: AuthorityToWorker.jobs(many).frames(writer), jobs: &spare)
        #expect(spare.isEmpty)
        // Handed back as a worker does: the message's array, and nothing else holding it.
        do {
            guard case .jobs(let read) = consume first else { Issue.record("not a jobs message"); return }
            #expect(read == many)
            spare = read
        }
        let storage = spare.withUnsafeBufferPointer { $0.baseAddress }
        let second = try AuthorityToWorker(frames: AuthorityToWorker.jobs(entries).frames(writer), jobs: &spare)
        #expect(second == .jobs(entries))
        do {
            guard case .jobs(let again) = consume second else { Issue.record("not a jobs message"); return }
            #expect(again.withUnsafeBufferPointer { $0.baseAddress } == storage)
            spare = again
        }
        #expect(throws: ProtocolError.self) {
            try AuthorityToWorker(frames: [countHeader("jobs", 2), AuthorityToWorker.jobs(entries).frames(writer)[1]], jobs: &spare)
        }
        #expect(spare.isEmpty && spare.capacity >= 100)
        #expect(spare.withUnsafeBufferPointer { $0.baseAddress } == storage)
    }

    @Test func theHeaderCountsTheJobsAndTheBodyIsAnArrayOfFourElementArrays() throws {
        let frames = AuthorityToWorker.jobs(Array(entries.prefix(2))).frames(writer)
        #expect(try WireHeader.read(frames[0]) { header throws(ProtocolError) in try header.uint(0, "count") } == 2)
        // [[1, 0, "slowIncrease", bin(5)], ...]: fixarray of 2, fixarray of 4, 1, 0, fixstr 12.
        #expect(Array(frames[1].prefix(5)) == [0x92, 0x94, 0x01, 0x00, 0xAC])
    }

    @Test func aMalformedJobsMessageIsATypedError() {
        let header = { countHeader("jobs", $0) }, element = bodyOfOne
        let body = AuthorityToWorker.jobs(entries).frames(writer)[1]
        let wrongShapes: [[[UInt8]]] = [
            [header(3)],                                   // no body
            [header(3), body, [0x90]],                     // a frame too many
            [header(0), [0x90]],                           // no job
            [header(2), body],                             // the count disagrees with the body
            [header(4), body],
            [header(1), [0xC1]],                           // not MessagePack
            [header(1), body + [0x00]],                    // trailing bytes
            [header(1), element { $0.packArrayHeader(3); $0.packUInt(1); $0.packUInt(0); $0.packString("k") }],
            [header(1), element { $0.packArrayHeader(4); $0.packUInt(1); $0.packUInt(1 << 32); $0.packString("k"); $0.packBinary([]) }],
            [header(1), element { $0.packArrayHeader(4); $0.packUInt(1); $0.packUInt(0); $0.packUInt(5); $0.packBinary([]) }],
            [header(1), element { $0.packArrayHeader(4); $0.packUInt(1); $0.packUInt(0); $0.packString("k"); $0.packString("not bin") }],
            [header(1), element { $0.packArrayHeader(4); $0.packInt(-1); $0.packUInt(0); $0.packString("k"); $0.packBinary([]) }],
            [header(1), element { $0.packArrayHeader(4); $0.packUInt(1); $0.packUInt(0); $0.packString(String(repeating: "k", count: 1_025)); $0.packBinary([]) }],
        ]
        expectMalformed(wrongShapes) { frames throws(ProtocolError) in try AuthorityToWorker(frames: frames) }
        // A worker's `features` is an array of strings and its largest frame, nothing else.
        let notStrings = writer.header("features", { $0.packArrayHeader(1); $0.packUInt(1); $0.packUInt(1_024) }, count: 2)
        let noLimit = writer.header("features", { $0.packArrayHeader(0) }, count: 1)
        let notALimit = writer.header("features", { $0.packArrayHeader(0); $0.packArrayHeader(0) }, count: 2)
        let threeFields = writer.header("features", { $0.packArrayHeader(0); $0.packUInt(1_024); $0.packUInt(1) }, count: 3)
        for frames in [[notStrings], [noLimit], [notALimit], [threeFields],
                       WorkerMessage.features(["jobs"], maxMessageBytes: 1_024).frames(writer) + [[0x90]]] {
            #expect(throws: ProtocolError.self) { try WorkerMessage(frames: frames) }
        }
    }
}

/// A `reports` message carries a worker's reports exactly, in order; its byte budget keeps it
/// within the smallest limit any authority sets; anything else is a typed `malformed` error.
@Suite struct JobReportsMessageTests {
    let writer = HeaderWriter()
    let job = JobID(actionSeq: 41, effectIndex: 2)

    var reports: [WorkerMessage] {
        [.emit(job: job, emitIndex: 0, payload: [0x81, 0xA1, 0x61, 0x80]), .done(job: job, emitCount: 1),
         .doneWithEmit(job: JobID(actionSeq: .max, effectIndex: .max), emitCount: .max, payload: []),
         .emit(job: JobID(actionSeq: 0, effectIndex: 0), emitIndex: .max, payload: Array(repeating: 3, count: 300))]
    }

    @Test func reportsRoundTripInOrder() throws {
        for count in 1 ... reports.count {
            let message = WorkerMessage.reports(Array(reports.prefix(count)))
            let frames = message.frames(writer)
            #expect(frames.count == 2)
            #expect(try WorkerMessage(frames: frames) == message)
        }
    }

    @Test func reportsWithinTheBudgetFitTheSmallestLimit() {
        // As many reports as the budget admits, of every kind and of awkward payload sizes.
        for payloadSize in [0, 1, 15, 16, 31, 32, 255, 256, 900] {
            var batch: [WorkerMessage] = []
            var bytes = 0
            var seq: UInt64 = .max - 1_000
            while true {
                let report: WorkerMessage = switch seq % 3 {
                case 0: .emit(job: JobID(actionSeq: seq, effectIndex: .max), emitIndex: .max, payload: Array(repeating: 1, count: payloadSize))
                case 1: .done(job: JobID(actionSeq: seq, effectIndex: .max), emitCount: .max)
                default: .doneWithEmit(job: JobID(actionSeq: seq, effectIndex: .max), emitCount: .max, payload: Array(repeating: 2, count: payloadSize))
                }
                guard JobReports.maxHeaderBytes + bytes + JobReports.bytes(of: report) <= JobReports.maxMessageBytes else { break }
                batch.append(report)
                bytes += JobReports.bytes(of: report)
                seq += 1
            }
            guard !batch.isEmpty else { continue }
            let size = WorkerMessage.reports(batch).frames(writer).reduce(0) { $0 + $1.count }
            #expect(size <= JobReports.maxMessageBytes, "\(batch.count) reports of \(payloadSize)-byte mutations: \(size) bytes")
        }
    }

    @Test func aMalformedReportsMessageIsATypedError() {
        let header = { countHeader("reports", $0) }, element = bodyOfOne
        let body = WorkerMessage.reports(reports).frames(writer)[1]
        let wrongShapes: [[[UInt8]]] = [
            [header(4)], [header(4), body, [0x90]], [header(0), [0x90]], [header(3), body], [header(5), body],
            [header(1), [0xC1]], [header(4), body + [0x00]],
            [header(1), element { $0.packArrayHeader(4); $0.packUInt(1); $0.packUInt(0); $0.packString("done"); $0.packUInt(1) }],
            [header(1), element { $0.packArrayHeader(5); $0.packUInt(1); $0.packUInt(0); $0.packString("failed"); $0.packUInt(1); $0.packNil() }],
            [header(1), element { $0.packArrayHeader(5); $0.packUInt(1); $0.packUInt(0); $0.packString("emit"); $0.packUInt(1); $0.packNil() }],
            [header(1), element { $0.packArrayHeader(5); $0.packUInt(1); $0.packUInt(0); $0.packString("done"); $0.packUInt(0); $0.packBinary([1]) }],
            [header(1), element { $0.packArrayHeader(5); $0.packUInt(1); $0.packUInt(1 << 32); $0.packString("done"); $0.packUInt(1); $0.packNil() }],
            [header(1), element { $0.packArrayHeader(5); $0.packUInt(1); $0.packUInt(0); $0.packString("done"); $0.packUInt(1 << 32); $0.packNil() }],
            [header(1), element { $0.packArrayHeader(5); $0.packUInt(1); $0.packUInt(0); $0.packString("emit"); $0.packUInt(1); $0.packString("text") }],
        ]
        expectMalformed(wrongShapes) { frames throws(ProtocolError) in try WorkerMessage(frames: frames) }
    }
}
