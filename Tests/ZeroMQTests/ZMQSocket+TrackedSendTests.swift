import Synchronization
import Testing
import ZeroMQ

/// Counts the releases a tracked send reports, from whichever thread libzmq runs them on.
private final class ReleaseCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func bump() { count.add(1, ordering: .releasing) }
}

/// Memory lent to libzmq: alive while anyone holds it; counts when it goes. (`@unchecked`: the
/// bytes are written in `init` only, read-only after, and freed when no one holds this.)
private final class LentBytes: @unchecked Sendable {
    let base: UnsafeMutableRawBufferPointer
    let gone: ReleaseCount

    init(_ bytes: [UInt8], gone: ReleaseCount) {
        base = .allocate(byteCount: bytes.count, alignment: 1)
        base.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: bytes.count))
        self.gone = gone
    }

    deinit {
        base.deallocate()
        gone.bump()
    }
}

@Suite struct ZMQSocketTrackedSendTests {
    @Test func lentBytesArriveAsTheyAreAndTheirOwnerIsHeldUntilTheReceiverHasThem() throws {
        try withContext { context in
            try withPushPull(context, at: "inproc://lent-send") { push, pull throws in
                let (releases, gone) = (ReleaseCount(), ReleaseCount())
                let body = (0 ..< 100_000).map { UInt8(truncatingIfNeeded: $0) }
                do {
                    let owner = LentBytes(body, gone: gone)
                    #expect(try push.trySend([bytes("head")], lending: UnsafeRawBufferPointer(owner.base), keptAliveBy: owner) { releases.bump() })
                }
                // The caller's reference is gone; libzmq's keeps the bytes until they are read.
                #expect(gone.value == 0 && releases.value == 0)
                #expect(try receive(pull) == [bytes("head"), body])
                #expect(gone.value == 1 && releases.value == 1)

                // Nothing to lend: an empty last frame, and the owner is let go of at once.
                do {
                    let empty = LentBytes([], gone: gone)
                    #expect(try push.trySend([bytes("empty")], lending: UnsafeRawBufferPointer(start: nil, count: 0), keptAliveBy: empty) { releases.bump() })
                }
                #expect(gone.value == 2)
                #expect(try receive(pull) == [bytes("empty"), []])
                #expect(releases.value == 2)
            }
        }
    }

    @Test func lentBytesThatCannotLeaveAreLetGoOfAtOnce() throws {
        try withContext { context in
            let dealer = try ZMQSocket(context: context, type: .dealer)
            defer { dealer.close() }
            let (releases, gone) = (ReleaseCount(), ReleaseCount())
            do {
                let owner = LentBytes([1, 2, 3], gone: gone)
                #expect(try dealer.trySend([bytes("no")], lending: UnsafeRawBufferPointer(owner.base), keptAliveBy: owner) { releases.bump() } == false)
                #expect(try dealer.trySend([], lending: UnsafeRawBufferPointer(owner.base), keptAliveBy: owner) { releases.bump() } == false)
            }
            #expect(gone.value == 1 && releases.value == 2)
        }
    }

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
