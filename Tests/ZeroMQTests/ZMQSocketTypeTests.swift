import Testing
import ZeroMQ

@Suite struct ZMQSocketTypeTests {
    @Test func everyTypeIsReportedBackByLibzmq() throws {
        try withContext { context in
            for type in ZMQSocketType.allCases {
                let socket = try ZMQSocket(context: context, type: type)
                defer { socket.close() }
                #expect(try socket.get(.type) == type)
            }
            #expect(ZMQSocketType.allCases.count == 12)
            #expect(ZMQSocketType.router.description == "ROUTER")
        }
    }

    @Test func subscriberGetsExactlyItsTopicOnceTheSubscriptionIsLive() throws {
        try withContext { context in
            let publisher = try ZMQSocket(context: context, type: .pub)
            let subscriber = try ZMQSocket(context: context, type: .sub)
            defer { publisher.close(); subscriber.close() }
            try subscriber.set(.subscribe, "weather.")
            try subscriber.connect(try bindEphemeral(publisher))

            // Slow joiner: publish probes until one gets through, so the subscription is known to be live.
            var live = false
            for _ in 0..<500 where !live {
                try publisher.send([bytes("weather."), bytes("probe")])
                live = try receive(subscriber, within: .milliseconds(20)) != nil
            }
            try #require(live)

            for index in 0..<50 {
                try publisher.send([bytes("sports."), bytes("\(index)")])
                try publisher.send([bytes("weather."), bytes("\(index)")])
            }
            try publisher.send([bytes("weather."), bytes("end")])

            var weather: [String] = []
            var otherTopics = 0
            while let message = try receive(subscriber) {
                guard text(message[0]) == "weather." else { otherTopics += 1; continue }
                let body = text(message[1])
                if body == "end" { break }
                if body != "probe" { weather.append(body) }
            }
            #expect(otherTopics == 0)
            #expect(weather == (0..<50).map { "\($0)" })
        }
    }

    @Test func xpubSeesSubscribeAndUnsubscribeMessages() throws {
        try withContext { context in
            let publisher = try ZMQSocket(context: context, type: .xpub)
            let subscriber = try ZMQSocket(context: context, type: .sub)
            defer { publisher.close(); subscriber.close() }
            try subscriber.connect(try bindEphemeral(publisher))
            try subscriber.set(.subscribe, bytes("t1"))
            #expect(try receive(publisher) == [[1] + bytes("t1")])
            // The subscription is live once XPUB has seen it: a message published now must arrive.
            try publisher.send([bytes("t1"), bytes("payload")])
            #expect(try receive(subscriber) == [bytes("t1"), bytes("payload")])
            try subscriber.set(.unsubscribe, "t1")
            #expect(try receive(publisher) == [[0] + bytes("t1")])
        }
    }

    @Test func routerRoutesRepliesToTheRightOfThreeDealers() throws {
        try withContext { context in
            let router = try ZMQSocket(context: context, type: .router)
            defer { router.close() }
            let endpoint = try bindEphemeral(router)
            var dealers: [ZMQSocket] = []
            defer { dealers.forEach { $0.close() } }
            for index in 0..<3 {
                let dealer = try ZMQSocket(context: context, type: .dealer)
                dealers.append(dealer)
                try dealer.set(.routingID, bytes("peer-\(index)"))
                try dealer.connect(endpoint)
                try dealer.send([bytes("hello"), bytes("from"), bytes("\(index)")])
            }

            var senders: Set<String> = []
            for _ in 0..<3 {
                let message = try #require(try receive(router))
                #expect(message.count == 4)
                #expect(Array(message.dropFirst()) == [bytes("hello"), bytes("from"), bytes(String(text(message[0]).dropFirst(5)))])
                senders.insert(text(message[0]))
                try router.send([message[0], bytes("reply"), bytes("to \(text(message[0]))")])
            }
            #expect(senders == ["peer-0", "peer-1", "peer-2"])

            for (index, dealer) in dealers.enumerated() {
                #expect(try receive(dealer) == [bytes("reply"), bytes("to peer-\(index)")])
                #expect(try dealer.tryReceiveMultipart() == nil)
            }
        }
    }
}
