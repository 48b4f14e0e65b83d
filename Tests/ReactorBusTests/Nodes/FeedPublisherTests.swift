@testable import ReactorBus
import Testing
import ZeroMQ

@Suite struct FeedPublisherTests {
    @Test func theMarkIsTheByteBudgetOverTheMessageSizeWithinTwoAndTheCap() {
        #expect(FeedPublisher.highWaterMark(queueBytes: 64 << 20, messageBytes: 256, cap: 10_000) == 10_000)
        #expect(FeedPublisher.highWaterMark(queueBytes: 64 << 20, messageBytes: 330_000, cap: 10_000) == 203)
        #expect(FeedPublisher.highWaterMark(queueBytes: 1 << 20, messageBytes: 4 << 20, cap: 10_000) == 2)
        #expect(FeedPublisher.highWaterMark(queueBytes: 1 << 20, messageBytes: 0, cap: 10_000) == 10_000)
    }

    @Test func aLargerMessageLowersTheSocketsMarkBeforeItIsSentAndASmallerOneLeavesIt() throws {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(1)) }
        let socket = try ZMQSocket(context: context, type: .xpub)
        defer { socket.close() }
        let feed = try FeedPublisher(socket: socket, queueBytes: 1 << 20, maxHighWaterMark: 10_000)
        #expect(feed.highWaterMark == 4_096)
        #expect(try socket.get(.sendHighWaterMark) == 4_096)
        try socket.bind("inproc://feed-publisher-\(UInt64.random(in: 0...UInt64.max))")

        try feed.publish(.snapshot(version: 1, actionSeq: 1, payload: [UInt8](repeating: 7, count: 100_000)), now: 1)
        let largest = feed.largestMessage
        #expect(largest > 100_256 && largest < 100_300)
        #expect(feed.highWaterMark == (1 << 20) / largest)
        #expect(try socket.get(.sendHighWaterMark) == (1 << 20) / largest)
        #expect(feed.lastSnapshotVersion == 1)

        try feed.publish(.heartbeat(version: 1, actionSeq: 1), now: 2)
        #expect(feed.largestMessage == largest)
        #expect(try socket.get(.sendHighWaterMark) == (1 << 20) / largest)
    }
}
