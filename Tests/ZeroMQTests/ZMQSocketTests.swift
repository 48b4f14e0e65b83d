import Testing
import ZeroMQ
import TestSupport

@Suite struct ZMQSocketTests {
    @Test func newSocketHasBoundedDefaultLingerAndItsType() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .dealer)
            defer { socket.close() }
            #expect(try socket.get(.linger) == ZMQSocket.defaultLinger)
            #expect(ZMQSocket.defaultLinger == 100)
            #expect(socket.type == .dealer)
            #expect(!socket.isClosed)
        }
    }

    @Test func closeIsIdempotent() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .pair)
            socket.close()
            socket.close()
            #expect(socket.isClosed)
        }
    }

    @Test func everyOperationOnAClosedSocketIsNotSocket() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .pair)
            socket.close()
            let notSocket = ZMQError.Code.notSocket
            #expect(expectZMQError(notSocket) { try socket.bind("inproc://closed") }?.function == "zmq_bind")
            #expect(expectZMQError(notSocket) { try socket.connect("inproc://closed") }?.function == "zmq_connect")
            expectZMQError(notSocket) { try socket.unbind("inproc://closed") }
            expectZMQError(notSocket) { try socket.disconnect("inproc://closed") }
            #expect(expectZMQError(notSocket) { try socket.send(bytes("x")) }?.function == "zmq_send")
            expectZMQError(notSocket) { try socket.send([bytes("a"), bytes("b")]) }
            expectZMQError(notSocket) { try socket.trySend(bytes("x")) }
            #expect(expectZMQError(notSocket) { try socket.receiveMultipart() }?.function == "zmq_msg_recv")
            expectZMQError(notSocket) { try socket.tryReceiveMultipart() }
            expectZMQError(notSocket) { try socket.receiveFrames(wait: false) { _, _, _ in } }
            expectZMQError(notSocket) { try socket.set(.linger, 0) }
            expectZMQError(notSocket) { try socket.get(.linger) }
            expectZMQError(notSocket) { try socket.get(.lastEndpoint) }
            expectZMQError(notSocket) { try ZMQPoller().register(socket) }
        }
    }

    @Test func pollingASocketClosedAfterRegistrationIsNotSocket() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .pull)
            let poller = ZMQPoller()
            try poller.register(socket)
            socket.close()
            expectZMQError(ZMQError.Code.notSocket) { try poller.poll(timeout: 0) }
        }
    }

    @Test func forgottenSocketIsClosedByDeinitSoTheContextTerminates() throws {
        let context = try ZMQContext()
        do {
            let socket = try ZMQSocket(context: context, type: .push)
            try socket.set(.linger, -1)
            try socket.connect("tcp://127.0.0.1:1")
            // Queued to a peer that never exists; an infinite linger would block termination forever.
            #expect(try socket.trySend(bytes("never delivered")))
        }
        #expect(context.terminate(timeout: promptly))
    }

    @Test func unbindAndDisconnectReleaseEndpoints() throws {
        try withContext { context in
            let server = try ZMQSocket(context: context, type: .pull)
            let other = try ZMQSocket(context: context, type: .pull)
            let client = try ZMQSocket(context: context, type: .push)
            defer { server.close(); other.close(); client.close() }
            let endpoint = try bindEphemeral(server)
            try client.connect(endpoint)
            try client.disconnect(endpoint)
            try server.unbind(endpoint)
            // The port is free again once unbound (the listener closes asynchronously, so retry boundedly).
            let deadline = ContinuousClock.now + promptly
            var rebound = false
            while !rebound && ContinuousClock.now < deadline {
                do {
                    try other.bind(endpoint)
                    rebound = true
                } catch let error as ZMQError where error.code == ZMQError.Code.addressInUse {
                    try ZMQPoller().poll(timeout: 10)
                }
            }
            #expect(rebound)
        }
    }

    @Test func socketCannotBeCreatedAfterShutdown() throws {
        let context = try ZMQContext()
        context.shutdown()
        #expect(context.isShutDown)
        expectZMQError(ZMQError.Code.terminated) { try ZMQSocket(context: context, type: .pair) }
        #expect(context.terminate(timeout: promptly))
        #expect(context.isTerminated)
        expectZMQError(ZMQError.Code.terminated) { try ZMQSocket(context: context, type: .pair) }
    }
}
