import Testing
import ZeroMQ

/// A connected inproc PAIR, closed by the caller.
private func makePair(_ context: ZMQContext, _ name: String) throws -> (ZMQSocket, ZMQSocket) {
    let left = try ZMQSocket(context: context, type: .pair)
    let right = try ZMQSocket(context: context, type: .pair)
    try left.bind("inproc://\(name)")
    try right.connect("inproc://\(name)")
    return (left, right)
}

@Suite struct ZMQSocketReceiveTests {
    @Test func multipartFramesArriveWholeAndInOrder() throws {
        try withContext { context in
            let (left, right) = try makePair(context, "receive-order")
            defer { left.close(); right.close() }
            let frames: [[UInt8]] = [bytes("first"), [], bytes("third"), [UInt8](repeating: 7, count: 100_000)]
            try left.send(frames)
            #expect(try right.receiveMultipart() == frames)
        }
    }

    @Test func messagesOfChangingShapesArriveExactWhetherOrNotEarlierOnesAreKept() throws {
        try withContext { context in
            let (left, right) = try makePair(context, "receive-reuse")
            defer { left.close(); right.close() }
            // Frames shrink, grow, vanish and come back, one past the size the socket keeps
            // arrays of: each message must arrive exact, read into the last one's arrays or not.
            let large = [UInt8](repeating: 9, count: 70_000)
            let messages: [[[UInt8]]] = [
                [bytes("id"), bytes("header"), bytes("a payload of some length")],
                [bytes("id"), bytes("hd"), bytes("p")],
                [bytes("other"), [], bytes("third"), bytes("fourth")],
                [bytes("one")],
                [bytes("id"), large, bytes("after the large frame")],
                [bytes("id"), bytes("small again"), []],
                [bytes("id"), bytes("header"), bytes("a payload of some length")],
            ]
            // Each received and let go before the next.
            for message in messages {
                try left.send(message)
                #expect(try right.receiveMultipart() == message)
            }
            // Each kept: the ones kept must not change as the next ones arrive.
            var kept: [[[UInt8]]] = []
            for message in messages {
                try left.send(message)
                kept.append(try right.receiveMultipart())
            }
            #expect(kept == messages)
            // A frame kept on its own while the rest is let go.
            var headers: [[UInt8]] = []
            for message in messages where message.count > 1 {
                try left.send(message)
                headers.append(try right.receiveMultipart()[1])
            }
            #expect(headers == messages.filter { $0.count > 1 }.map { $0[1] })
        }
    }

    @Test func tryReceiveReportsNothingWaitingAsNil() throws {
        try withContext { context in
            let (left, right) = try makePair(context, "receive-try")
            defer { left.close(); right.close() }
            #expect(try right.tryReceiveMultipart() == nil)
            try left.send(bytes("now"))
            #expect(try receive(right) == [bytes("now")])
            #expect(try right.tryReceiveMultipart() == nil)
        }
    }

    @Test func expiredReceiveTimeoutThrowsWouldBlock() throws {
        try withContext { context in
            let (left, right) = try makePair(context, "receive-timeout")
            defer { left.close(); right.close() }
            try right.set(.receiveTimeout, 20)
            let error = expectZMQError(ZMQError.Code.wouldBlock) { try right.receiveMultipart() }
            #expect(error?.isWouldBlock == true)
            #expect(try right.receiveFrames { _, _, _ in Issue.record("no frame expected") } == false)
        }
    }

    @Test func zeroCopyReceiveSeesEveryFrameWithIndexAndMoreFlag() throws {
        try withContext { context in
            let (left, right) = try makePair(context, "receive-zero-copy")
            defer { left.close(); right.close() }
            #expect(try right.receiveFrames(wait: false) { _, _, _ in Issue.record("nothing was sent") } == false)
            try left.send([bytes("a"), bytes("bb"), bytes("ccc")])
            var seen: [(String, Int, Bool)] = []
            let handled = try right.receiveFrames { frame, index, more in
                seen.append((String(decoding: frame, as: UTF8.self), index, more))
            }
            #expect(handled)
            #expect(seen.map(\.0) == ["a", "bb", "ccc"])
            #expect(seen.map(\.1) == [0, 1, 2])
            #expect(seen.map(\.2) == [true, true, false])
        }
    }

    @Test func throwingBodyDiscardsTheRestOfThatMessageOnly() throws {
        struct Stop: Error {}
        try withContext { context in
            let (left, right) = try makePair(context, "receive-throw")
            defer { left.close(); right.close() }
            try left.send([bytes("1a"), bytes("1b"), bytes("1c")])
            try left.send([bytes("2a"), bytes("2b")])
            var calls = 0
            #expect(throws: Stop.self) {
                try right.receiveFrames { _, index, _ in
                    calls += 1
                    if index == 0 { throw Stop() }
                }
            }
            #expect(calls == 1)
            #expect(try right.receiveMultipart() == [bytes("2a"), bytes("2b")])
        }
    }

    @Test func aRouterNamesEachSenderWhateverTheOneBeforeIt() throws {
        // The first frame is shared with the previous message's when the bytes are the same:
        // interleaved peers with ids of the same length, another length, a prefix and a long id
        // must each still be named exactly.
        try withContext { context in
            let router = try ZMQSocket(context: context, type: .router)
            defer { router.close() }
            let endpoint = try bindEphemeral(router)
            let ids = ["a", "b", "ab", "abc", String(repeating: "x", count: 40), String(repeating: "x", count: 41)]
            let dealers = try ids.map { id in
                let dealer = try ZMQSocket(context: context, type: .dealer)
                try dealer.set(.routingID, bytes(id))
                try dealer.connect(endpoint)
                return dealer
            }
            defer { for dealer in dealers { dealer.close() } }
            let order = [0, 0, 1, 0, 2, 3, 3, 4, 5, 4, 1, 2]
            for (step, index) in order.enumerated() {
                try dealers[index].send([bytes("m\(step)")])
                let message = try #require(try receive(router))
                #expect(message == [bytes(ids[index]), bytes("m\(step)")], "step \(step)")
            }
        }
    }

    @Test func eightMebibyteMessageArrivesIntactOverTCP() throws {
        try withContext { context in
            let router = try ZMQSocket(context: context, type: .router)
            let dealer = try ZMQSocket(context: context, type: .dealer)
            defer { router.close(); dealer.close() }
            try dealer.set(.routingID, bytes("big"))
            try dealer.connect(try bindEphemeral(router))
            var payload = [UInt8](repeating: 0, count: 8 << 20)
            for index in payload.indices { payload[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }
            try dealer.send([bytes("header"), payload])
            let message = try #require(try receive(router))
            #expect(message.count == 3)
            #expect(message.first == bytes("big"))
            #expect(message.dropFirst().first == bytes("header"))
            #expect(message.last?.count == payload.count)
            #expect(message.last == payload)
        }
    }

    @Test func zeroCopyReceiveOfALargeFrameMatchesTheSentBytes() throws {
        try withContext { context in
            let (left, right) = try makePair(context, "receive-zero-copy-large")
            defer { left.close(); right.close() }
            let payload = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) }
            try left.send(payload)
            var matched = false
            _ = try right.receiveFrames { frame, _, _ in
                matched = frame.elementsEqual(payload)
            }
            #expect(matched)
        }
    }
}
