import Testing
import ZeroMQ

@Suite struct ZMQSocketOptionTests {
    @Test func integerAndFlagOptionsReadBackWhatLibzmqHolds() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .dealer)
            defer { socket.close() }
            try socket.set(.linger, 250)
            try socket.set(.sendHighWaterMark, 77)
            try socket.set(.receiveHighWaterMark, 88)
            try socket.set(.maxMessageSize, 1 << 33)
            try socket.set(.heartbeatInterval, 1000)
            try socket.set(.heartbeatTimeout, 3000)
            try socket.set(.heartbeatTTL, 1500)
            try socket.set(.receiveTimeout, 123)
            try socket.set(.sendTimeout, 456)
            try socket.set(.tcpKeepalive, 1)
            try socket.set(.conflate, true)
            try socket.set(.immediate, true)
            try socket.set(.zapDomain, "global")
            try socket.set(.routingID, [0, 1, 2, 3])
            #expect(try socket.get(.linger) == 250)
            #expect(try socket.get(.sendHighWaterMark) == 77)
            #expect(try socket.get(.receiveHighWaterMark) == 88)
            #expect(try socket.get(.maxMessageSize) == 1 << 33)
            #expect(try socket.get(.heartbeatInterval) == 1000)
            #expect(try socket.get(.heartbeatTimeout) == 3000)
            #expect(try socket.get(.heartbeatTTL) == 1500)
            #expect(try socket.get(.receiveTimeout) == 123)
            #expect(try socket.get(.sendTimeout) == 456)
            #expect(try socket.get(.tcpKeepalive) == 1)
            #expect(try socket.get(.conflate) == true)
            #expect(try socket.get(.immediate) == true)
            #expect(try socket.get(.zapDomain) == "global")
            #expect(try socket.get(.routingID) == [0, 1, 2, 3])
            try socket.set(.conflate, false)
            #expect(try socket.get(.conflate) == false)
        }
    }

    @Test func defaultsComeFromLibzmq() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .sub)
            defer { socket.close() }
            #expect(try socket.get(.sendHighWaterMark) == 1000)
            #expect(try socket.get(.maxMessageSize) == -1)
            #expect(try socket.get(.receiveTimeout) == -1)
            #expect(try socket.get(.curveServer) == false)
            #expect(try socket.get(.routingID) == [])
            #expect(try socket.get(.lastEndpoint) == "")
        }
    }

    @Test func lastEndpointResolvesTheWildcardPort() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .router)
            defer { socket.close() }
            let endpoint = try bindEphemeral(socket)
            #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
            let port = try #require(Int(endpoint.dropFirst("tcp://127.0.0.1:".count)))
            #expect(port > 0 && port < 65536)
        }
    }

    @Test func curveKeysReadBackInBothForms() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .router)
            defer { socket.close() }
            let pair = try ZMQCurve.generateKeyPair()
            try socket.set(.curveServer, true)
            try socket.set(.curveSecretKey, pair.secretKey)
            try socket.set(.curvePublicKey, try ZMQCurve.z85Decode(pair.publicKey))
            #expect(try socket.get(.curveServer) == true)
            let secretText: String = try socket.get(.curveSecretKey)
            let publicBytes: [UInt8] = try socket.get(.curvePublicKey)
            #expect(secretText == pair.secretKey)
            #expect(publicBytes == (try ZMQCurve.z85Decode(pair.publicKey)))
        }
    }

    @Test func writeOnlyOptionsAreAccepted() throws {
        try withContext { context in
            let router = try ZMQSocket(context: context, type: .router)
            let subscriber = try ZMQSocket(context: context, type: .sub)
            defer { router.close(); subscriber.close() }
            try router.set(.routerMandatory, true)
            try router.set(.routerHandover, true)
            try router.set(.probeRouter, true)
            try subscriber.set(.subscribe, "a")
            try subscriber.set(.subscribe, bytes("b"))
            try subscriber.set(.unsubscribe, "a")
            try subscriber.set(.unsubscribe, bytes("b"))
        }
    }

    @Test func rejectedValuesAreInvalidArgument() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .dealer)
            defer { socket.close() }
            expectZMQError(ZMQError.Code.invalidArgument) { try socket.set(.linger, Int(Int32.max) + 1) }
            expectZMQError(ZMQError.Code.invalidArgument) { try socket.set(.curvePublicKey, "too short") }
            expectZMQError(ZMQError.Code.invalidArgument) { try socket.set(.routingID, []) }
            expectZMQError(ZMQError.Code.invalidArgument) { try socket.set(.subscribe, "not a SUB") }
            #expect(try socket.get(.linger) == ZMQSocket.defaultLinger)
        }
    }

    @Test func oversizedMessageDropsThePeerWhichReconnectsAndCarriesOn() throws {
        try withContext { context in
            let router = try ZMQSocket(context: context, type: .router)
            let dealer = try ZMQSocket(context: context, type: .dealer)
            defer { router.close(); dealer.close() }
            try router.set(.maxMessageSize, 1024)
            try dealer.connect(try bindEphemeral(router))
            try dealer.send(bytes("before"))
            let before = try #require(try receive(router))
            #expect(Array(before.dropFirst()) == [bytes("before")])

            try dealer.send([UInt8](repeating: 0xAB, count: 4096))
            // libzmq closes the offending connection; the DEALER reconnects and, without a fixed
            // routing id, comes back under a new generated one. Probe until a small message lands.
            var after: [[UInt8]]?
            for attempt in 0..<200 where after == nil {
                _ = try dealer.trySend(bytes("after-\(attempt)"))
                after = try receive(router, within: .milliseconds(50))
                #expect(after.map { $0.count == 2 && $0[1].count < 1024 } ?? true)
            }
            let message = try #require(after)
            #expect(text(message[1]).hasPrefix("after-"))
            #expect(message[0] != before[0])
        }
    }
}
