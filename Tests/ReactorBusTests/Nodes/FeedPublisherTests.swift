@testable import ReactorBus
import ReactorWire
import Testing
import ZeroMQ
import TestSupport

@Suite struct FeedPublisherTests {
    @Test func theMarkIsTheByteBudgetOverTheMessageSizeWithinTwoAndTheCap() {
        #expect(FeedPublisher.highWaterMark(queueBytes: 64 << 20, messageBytes: 256, cap: 10_000) == 10_000)
        // 203 fit: rounded down to a power of two.
        #expect(FeedPublisher.highWaterMark(queueBytes: 64 << 20, messageBytes: 330_000, cap: 10_000) == 128)
        #expect(FeedPublisher.highWaterMark(queueBytes: 64 << 20, messageBytes: 8_192, cap: 10_000) == 8_192)
        #expect(FeedPublisher.highWaterMark(queueBytes: 64 << 20, messageBytes: 8_193, cap: 10_000) == 4_096)
        #expect(FeedPublisher.highWaterMark(queueBytes: 1 << 20, messageBytes: 4 << 20, cap: 10_000) == 2)
        #expect(FeedPublisher.highWaterMark(queueBytes: 1 << 20, messageBytes: 0, cap: 10_000) == 10_000)
    }

    @Test func aLargerMessageLowersTheSocketsMarkBeforeItIsSentAndASmallerOneLeavesIt() throws {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(1)) }
        let socket = try ZMQSocket(context: context, type: .xpub)
        defer { socket.close() }
        let feed = try FeedPublisher(socket: socket, queueBytes: 1 << 20, maxHighWaterMark: 10_000)
        // Worked out for messages of 512 bytes: 2,048 of them fit.
        #expect(feed.highWaterMark == 2_048)
        #expect(try socket.get(.sendHighWaterMark) == 2_048)
        try socket.bind("inproc://feed-publisher-\(UInt64.random(in: 0...UInt64.max))")

        try feed.publish(.snapshot(version: 1, actionSeq: 1, payload: [UInt8](repeating: 7, count: 100_000)), now: 1)
        let largest = feed.largestMessage
        #expect(largest > 100_256 && largest < 100_300)
        // 10 fit: 8.
        #expect(feed.highWaterMark == 8)
        #expect(try socket.get(.sendHighWaterMark) == 8)
        #expect(feed.lastSnapshotVersion == 1)

        try feed.publish(.heartbeat(version: 1, actionSeq: 1), now: 2)
        #expect(feed.largestMessage == largest)
        #expect(try socket.get(.sendHighWaterMark) == 8)
        // Not bound through the publisher's endpoint: the socket alone.
        #expect(feed.rebinds == 0)
    }

    /// A subscriber connected before the first large message keeps hearing the feed after it.
    /// libzmq lowers a connected pipe's mark in place, and such a subscriber (caught up, past
    /// its reader's last acknowledgement point) then heard nothing more while it stayed
    /// connected; the publisher binds again instead, and the subscriber reconnects.
    @Test func aSubscriberConnectedBeforeTheMarkWentDownHearsTheMessagesAfterIt() async throws {
        try await withSubscribedFeed(on: "tcp://127.0.0.1:*") { feed, subscriber in
            try await hearsTheMessagesAfterTheMarkWentDown(feed, subscriber)
        }
    }

    private func hearsTheMessagesAfterTheMarkWentDown(_ feed: FeedPublisher, _ subscriber: ZMQSocket) async throws {
        try subscriber.set(.subscribe, FeedMessage.Topic.heartbeat)
        try subscriber.set(.subscribe, FeedMessage.Topic.snapshot)
        #expect(try await readUntil(feed) { feed.wantsSnapshots })

        // Caught up with a few small messages, then the large one lowers the mark to 8.
        for version in 1 ... 10 as ClosedRange<UInt64> { try feed.publish(.heartbeat(version: version, actionSeq: version), now: version) }
        #expect(try await received(by: subscriber) { $0 == .heartbeat(version: 10, actionSeq: 10) })
        try feed.publish(.snapshot(version: 11, actionSeq: 11, payload: [UInt8](repeating: 7, count: 100_000)), now: 11)
        #expect(feed.highWaterMark == 8 && feed.rebinds == 1)

        // Published in small bursts until one arrives (the subscriber reconnects first), and
        // then until it has heard 100 versions more: it goes on hearing the feed.
        var version: UInt64 = 11
        var first: UInt64?
        var last: UInt64 = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while last < (first ?? .max - 100) + 100, ContinuousClock.now < deadline {
            // As the loop does every turn: the old listener may still hold the port.
            try feed.bindAgainIfNeeded()
            for _ in 0 ..< 4 {
                version += 1
                try feed.publish(.heartbeat(version: version, actionSeq: version), now: version)
            }
            while let frames = try await subscriber.receiveMultipart(before: .now + .milliseconds(5)) {
                guard case .heartbeat(let heard, _)? = try? FeedMessage(frames: frames) else { continue }
                first = first ?? heard
                last = heard
            }
        }
        #expect(first.map { $0 > 11 } == true, "the subscriber heard nothing after the mark went down (published through version \(version))")
        #expect(last >= (first ?? .max - 100) + 100, "the subscriber heard versions \(first ?? 0) to \(last) of \(version)")
        #expect(feed.rebinds == 1 && feed.unboundSince == nil)
    }

    /// Reads `subscriber` until a message satisfies `condition`; false after the deadline.
    private func received(by subscriber: ZMQSocket, _ condition: (FeedMessage) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + promptly
        while let frames = try await subscriber.receiveMultipart(before: deadline) {
            if let message = try? FeedMessage(frames: frames), condition(message) { return true }
        }
        return false
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

    /// Runs `body` with a feed publisher on an XPUB socket and a SUB socket connected to it,
    /// subscribed to nothing yet; closes both after. Inproc by default; bound to `endpoint`, the
    /// publisher binds it again to lower its mark, as the authority's loop has it do.
    private func withSubscribedFeed(projections: [String] = [], on endpoint: String? = nil,
                                    _ body: (FeedPublisher, ZMQSocket) async throws -> Void) async throws {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let socket = try ZMQSocket(context: context, type: .xpub)
        let subscriber = try ZMQSocket(context: context, type: .sub)
        defer {
            subscriber.close()
            socket.close()
        }
        try socket.set(.linger, 0)
        try subscriber.set(.linger, 0)
        let feed = try FeedPublisher(socket: socket, queueBytes: 1 << 20, maxHighWaterMark: 10_000, projections: projections)
        try socket.bind(endpoint ?? "inproc://feed-wants-\(UInt64.random(in: 0...UInt64.max))")
        let bound: String = try socket.get(.lastEndpoint)
        if endpoint != nil { feed.boundEndpoint = bound }
        try subscriber.connect(bound)
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
