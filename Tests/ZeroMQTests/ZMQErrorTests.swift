import Testing
import ZeroMQ

@Suite struct ZMQErrorTests {
    @Test func descriptionNamesCallAndLibzmqMessage() {
        let error = ZMQError(code: ZMQError.Code.terminated, function: "zmq_msg_recv")
        #expect(error.description == "zmq_msg_recv: Context was terminated (errno \(ZMQError.Code.terminated))")
        #expect(error.isTerminated)
        #expect(!error.isWouldBlock)
    }

    @Test func shortcutsMatchTheirCodes() {
        #expect(ZMQError(code: ZMQError.Code.wouldBlock, function: "zmq_send").isWouldBlock)
        #expect(ZMQError(code: ZMQError.Code.hostUnreachable, function: "zmq_send").isHostUnreachable)
        #expect(ZMQError(code: ZMQError.Code.notSocket, function: "zmq_bind").isNotSocket)
        #expect(ZMQError(code: ZMQError.Code.invalidState, function: "zmq_send").isInvalidState)
        #expect(!ZMQError(code: ZMQError.Code.addressInUse, function: "zmq_bind").isHostUnreachable)
    }

    @Test func equalityIncludesFunctionName() {
        let a = ZMQError(code: ZMQError.Code.invalidArgument, function: "zmq_bind")
        #expect(a == ZMQError(code: ZMQError.Code.invalidArgument, function: "zmq_bind"))
        #expect(a != ZMQError(code: ZMQError.Code.invalidArgument, function: "zmq_connect"))
    }

    @Test func malformedTCPEndpointIsInvalidArgument() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .dealer)
            defer { socket.close() }
            let error = expectZMQError(ZMQError.Code.invalidArgument) { try socket.connect("tcp://nonsense") }
            #expect(error?.function == "zmq_connect")
            expectZMQError(ZMQError.Code.invalidArgument) { try socket.bind("tcp://nonsense") }
        }
    }

    @Test func unknownTransportIsProtocolNotSupported() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .router)
            defer { socket.close() }
            let error = expectZMQError(ZMQError.Code.protocolNotSupported) { try socket.bind("foo://x") }
            #expect(error?.function == "zmq_bind")
            #expect(error?.endpoint == "foo://x")
            #expect(error?.description.hasPrefix("zmq_bind foo://x: ") == true)
            expectZMQError(ZMQError.Code.protocolNotSupported) { try socket.connect("foo://x") }
        }
    }

    @Test func bindingATakenAddressIsAddressInUse() throws {
        try withContext { context in
            let first = try ZMQSocket(context: context, type: .router)
            let second = try ZMQSocket(context: context, type: .router)
            defer { first.close(); second.close() }
            let endpoint = try bindEphemeral(first)
            expectZMQError(ZMQError.Code.addressInUse) { try second.bind(endpoint) }
            try first.bind("inproc://taken")
            expectZMQError(ZMQError.Code.addressInUse) { try second.bind("inproc://taken") }
        }
    }

    @Test func unbindingAnUnknownEndpointIsNoEntry() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .pull)
            defer { socket.close() }
            expectZMQError(ZMQError.Code.noEntry) { try socket.unbind("tcp://127.0.0.1:1") }
            expectZMQError(ZMQError.Code.noEntry) { try socket.disconnect("tcp://127.0.0.1:1") }
        }
    }
}
