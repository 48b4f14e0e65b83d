import Synchronization
import Testing
import ZeroMQ

/// Counts the releases a tracked send reports, from whichever thread libzmq runs them on.
private final class ReleaseCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func bump() { count.add(1, ordering: .releasing) }
}

@Suite struct ZMQSocketTrackedSendTests {
    @Test func theReleaseRunsOnceWhenTheReceiverHasTakenTheMessageNotBefore() throws {
        try withContext { context in
            try withPushPull(context, at: "inproc://tracked-send") { push, pull throws in
                let releases = ReleaseCount()
                let body = [UInt8](repeating: 7, count: 100_000)
                #expect(try push.trySend([bytes("head"), body]) { releases.bump() })
                // In process, the message stays in the pipe until the receiver reads it.
                #expect(releases.value == 0)
                #expect(try receive(pull) == [bytes("head"), body])
                #expect(releases.value == 1)
            }
        }
    }

    @Test func aWouldBlockSendReportsFalseAndReleasesAtOnce() throws {
        try withContext { context in
            let dealer = try ZMQSocket(context: context, type: .dealer)
            defer { dealer.close() }
            let releases = ReleaseCount()
            #expect(try dealer.trySend([bytes("no"), bytes("body")]) { releases.bump() } == false)
            #expect(releases.value == 1)
            #expect(try dealer.trySend([bytes("single")]) { releases.bump() } == false)
            #expect(releases.value == 2)
        }
    }

    @Test func aClosedSocketThrowsAndReleases() throws {
        try withContext { context in
            let push = try ZMQSocket(context: context, type: .push)
            push.close()
            let releases = ReleaseCount()
            #expect(expectZMQError(ZMQError.Code.notSocket) { try push.trySend([bytes("late")]) { releases.bump() } }?.function == "zmq_msg_send")
            #expect(releases.value == 1)
        }
    }

    @Test func messagesNeverDeliveredAreReleasedWhenTheSocketGoesAway() throws {
        let releases = ReleaseCount()
        try withContext { context in
            let push = try ZMQSocket(context: context, type: .push)
            let pull = try ZMQSocket(context: context, type: .pull)
            try pull.bind("inproc://tracked-dropped")
            try push.connect("inproc://tracked-dropped")
            for _ in 0..<3 { #expect(try push.trySend([bytes("unread")]) { releases.bump() }) }
            #expect(releases.value == 0)
            try push.set(.linger, 0)
            push.close()
            pull.close()
        }
        // The context has terminated: every pipe, and every message in it, is gone.
        #expect(releases.value == 3)
    }
}
