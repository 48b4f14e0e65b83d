import Testing
import ZeroMQ

@Suite struct ZMQSocketSendTests {
    @Test func sendFromRawBufferDeliversTheSameBytes() throws {
        try withContext { context in
            try withPushPull(context, at: "inproc://send-raw") { push, pull throws in
                let header = bytes("raw-header")
                let body: [UInt8] = [0, 1, 2, 255]
                try header.withUnsafeBytes { buffer in try push.send(buffer, more: true) }
                let sent = try body.withUnsafeBytes { buffer in try push.trySend(buffer) }
                #expect(sent)
                #expect(try receive(pull) == [header, body])
            }
        }
    }

    @Test func framesSentWithMoreFormOneMessage() throws {
        try withContext { context in
            try withPushPull(context, at: "inproc://send-more") { push, pull throws in
                try push.send(bytes("one"), more: true)
                try push.send(bytes("two"), more: true)
                try push.send(bytes("three"))
                #expect(try receive(pull) == [bytes("one"), bytes("two"), bytes("three")])
            }
        }
    }

    @Test func trySendWithoutAPeerReportsWouldBlockAsFalse() throws {
        try withContext { context in
            let dealer = try ZMQSocket(context: context, type: .dealer)
            defer { dealer.close() }
            #expect(try dealer.trySend(bytes("nobody")) == false)
            #expect(try dealer.trySend([bytes("no"), bytes("body")]) == false)
        }
    }

    @Test func trySendStopsAtTheHighWaterMark() throws {
        try withContext { context in
            let push = try ZMQSocket(context: context, type: .push)
            let pull = try ZMQSocket(context: context, type: .pull)
            defer { push.close(); pull.close() }
            try push.set(.sendHighWaterMark, 5)
            try pull.set(.receiveHighWaterMark, 5)
            try pull.bind("inproc://send-hwm")
            try push.connect("inproc://send-hwm")
            var accepted = 0
            while accepted < 1000, try push.trySend(bytes("m\(accepted)")) { accepted += 1 }
            // inproc sums both ends' marks; the exact figure is libzmq's business, the bound is ours.
            #expect(accepted >= 5 && accepted <= 10)
            #expect(try pull.receiveMultipart() == [bytes("m0")])
        }
    }

    @Test func blockingSendTimesOutWithWouldBlock() throws {
        try withContext { context in
            let dealer = try ZMQSocket(context: context, type: .dealer)
            defer { dealer.close() }
            try dealer.set(.sendTimeout, 20)
            expectZMQError(ZMQError.Code.wouldBlock) { try dealer.send(bytes("stuck")) }
        }
    }

    @Test func mandatoryRouterReportsUnknownPeerAsHostUnreachable() throws {
        try withContext { context in
            let router = try ZMQSocket(context: context, type: .router)
            defer { router.close() }
            try router.set(.routerMandatory, true)
            let error = expectZMQError(ZMQError.Code.hostUnreachable) { try router.send([bytes("ghost"), bytes("hi")]) }
            #expect(error?.isHostUnreachable == true)
        }
    }

    @Test func requestSocketSendingTwiceIsInvalidState() throws {
        try withContext { context in
            let request = try ZMQSocket(context: context, type: .req)
            let reply = try ZMQSocket(context: context, type: .rep)
            defer { request.close(); reply.close() }
            try reply.bind("inproc://send-fsm")
            try request.connect("inproc://send-fsm")
            try request.send(bytes("ping"))
            let error = expectZMQError(ZMQError.Code.invalidState) { try request.send(bytes("again")) }
            #expect(error?.isInvalidState == true)
            #expect(try receive(reply) == [bytes("ping")])
            try reply.send(bytes("pong"))
            #expect(try receive(request) == [bytes("pong")])
        }
    }
}
