import Testing
import ZeroMQ

@Suite struct ZMQCurveTests {
    @Test func curveIsAvailable() {
        #expect(ZMQ.hasCapability("curve"))
        #expect(!ZMQ.hasCapability("no-such-capability"))
    }

    @Test func generatedKeysAreZ85AndConsistent() throws {
        let pair = try ZMQCurve.generateKeyPair()
        #expect(pair.publicKey.utf8.count == 40)
        #expect(pair.secretKey.utf8.count == 40)
        #expect(try ZMQCurve.publicKey(fromSecret: pair.secretKey) == pair.publicKey)
        #expect(try ZMQCurve.z85Decode(pair.publicKey).count == 32)
        #expect(try ZMQCurve.generateKeyPair() != pair)
    }

    @Test func z85RoundTripsAndMatchesTheSpecVector() throws {
        // The test vector from the Z85 specification (ZeroMQ RFC 32).
        let bytes: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(try ZMQCurve.z85Encode(bytes) == "HelloWorld")
        #expect(try ZMQCurve.z85Decode("HelloWorld") == bytes)
        #expect(try ZMQCurve.z85Encode([]) == "")
    }

    @Test func malformedInputIsInvalidArgument() {
        expectZMQError(ZMQError.Code.invalidArgument) { try ZMQCurve.z85Encode([1, 2, 3]) }
        expectZMQError(ZMQError.Code.invalidArgument) { try ZMQCurve.z85Decode("abcd") }
        expectZMQError(ZMQError.Code.invalidArgument) { try ZMQCurve.z85Decode("abc\"~") }
        expectZMQError(ZMQError.Code.invalidArgument) { try ZMQCurve.publicKey(fromSecret: "short") }
    }

    @Test func encryptedPairTalksAndAWrongServerKeyGetsNothingThrough() throws {
        try withContext { context in
            let serverKeys = try ZMQCurve.generateKeyPair()
            let server = try ZMQSocket(context: context, type: .router)
            let good = try ZMQSocket(context: context, type: .dealer)
            let bad = try ZMQSocket(context: context, type: .dealer)
            defer { server.close(); good.close(); bad.close() }
            try server.set(.curveServer, true)
            try server.set(.curveSecretKey, serverKeys.secretKey)
            let endpoint = try bindEphemeral(server)

            for (client, serverKey, name) in [(bad, try ZMQCurve.generateKeyPair().publicKey, "bad"),
                                              (good, serverKeys.publicKey, "good")] {
                let keys = try ZMQCurve.generateKeyPair()
                try client.set(.curveServerKey, serverKey)
                try client.set(.curvePublicKey, keys.publicKey)
                try client.set(.curveSecretKey, keys.secretKey)
                try client.set(.routingID, bytes(name))
                try client.connect(endpoint)
                try client.send(bytes("hello from \(name)"))
            }

            let request = try #require(try receive(server))
            #expect(request == [bytes("good"), bytes("hello from good")])
            try server.send([bytes("good"), bytes("welcome")])
            #expect(try receive(good) == [bytes("welcome")])
            // The bad client connected first; give its (failing) handshake a bounded extra window.
            #expect(try receive(server, within: .milliseconds(500)) == nil)
            #expect(try bad.tryReceiveMultipart() == nil)
        }
    }
}
