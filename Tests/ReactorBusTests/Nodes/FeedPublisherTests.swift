@testable import ReactorBus
import ReactorWire
import Testing
import ZeroMQ
import TestSupport

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

    @Test func whatSubscribersWantIsKnownFromTheirSubscriptionsAndForgottenWhenTheyLeave() async throws {
        try await withSubscribedFeed { feed, subscriber in
            #expect(!feed.wantsSnapshots && !feed.wantsMutations)

            try subscriber.set(.subscribe, FeedMessage.Topic.snapshot)
            #expect(try await readUntil(feed) { feed.wantsSnapshots })
            #expect(!feed.wantsMutations)
            try subscriber.set(.subscribe, FeedMessage.Topic.mutation)
            #expect(try await readUntil(feed) { feed.wantsMutations })
            try subscriber.set(.unsubscribe, FeedMessage.Topic.snapshot)
            #expect(try await readUntil(feed) { !feed.wantsSnapshots })
            #expect(feed.wantsMutations)
        }
    }

    @Test func jobEventsAndEachProjectionAreWantedByTheirOwnTopicsOrByAPrefixOfThem() async throws {
        try await withSubscribedFeed(projections: ["open", "openTotals", "done"]) { feed, subscriber in
            #expect(!feed.wantsJobs && feed.wantedProjections.isEmpty)

            try subscriber.set(.subscribe, FeedMessage.Topic.job)
            #expect(try await readUntil(feed) { feed.wantsJobs })
            #expect(feed.wantedProjections.isEmpty && !feed.wantsSnapshots)
            // A topic's prefix subscribes to every projection it starts.
            try subscriber.set(.subscribe, FeedMessage.Topic.projection("open"))
            #expect(try await readUntil(feed) { !feed.wantedProjections.isEmpty })
            #expect(feed.wantedProjections == ["open", "openTotals"])
            try subscriber.set(.subscribe, FeedMessage.Topic.projection("done"))
            #expect(try await readUntil(feed) { feed.wantedProjections.count == 3 })
            try subscriber.set(.unsubscribe, FeedMessage.Topic.projection("open"))
            #expect(try await readUntil(feed) { feed.wantedProjections.count == 1 })
            #expect(feed.wantedProjections == ["done"] && feed.wantsJobs)
            try subscriber.set(.unsubscribe, FeedMessage.Topic.job)
            #expect(try await readUntil(feed) { !feed.wantsJobs })
        }
    }

    /// Runs `body` with a feed publisher on an XPUB socket and a SUB socket connected to it
    /// (inproc), subscribed to nothing yet; closes both after.
    private func withSubscribedFeed(projections: [String] = [], _ body: (FeedPublisher, ZMQSocket) async throws -> Void) async throws {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(1)) }
        let socket = try ZMQSocket(context: context, type: .xpub)
        let subscriber = try ZMQSocket(context: context, type: .sub)
        defer {
            subscriber.close()
            socket.close()
        }
        let feed = try FeedPublisher(socket: socket, queueBytes: 1 << 20, maxHighWaterMark: 10_000, projections: projections)
        let endpoint = "inproc://feed-wants-\(UInt64.random(in: 0...UInt64.max))"
        try socket.bind(endpoint)
        try subscriber.connect(endpoint)
        try await body(feed, subscriber)
    }

    /// Reads subscription changes until `condition` holds; false after the deadline.
    private func readUntil(_ feed: FeedPublisher, _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + promptly
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try feed.readSubscriptions()
            try await Task.sleep(for: .milliseconds(2))
        }
        return true
    }
}
