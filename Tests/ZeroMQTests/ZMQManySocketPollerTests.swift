#if os(Linux)
import Foundation
import Glibc
import Testing
import ZeroMQ
import TestSupport

@Suite struct ZMQManySocketPollerTests {
    /// Runs `body` with `count` PULL sockets, each with a PUSH connected to it over inproc, and a
    /// poller with the PULLs registered in order (index `i` is `pulls[i]`); closes them after.
    private func withPairs(_ context: ZMQContext, _ count: Int, name: String,
                           _ body: (_ pushes: [ZMQSocket], _ pulls: [ZMQSocket], _ poller: ZMQManySocketPoller) throws -> Void) throws {
        var pushes: [ZMQSocket] = [], pulls: [ZMQSocket] = []
        defer { (pushes + pulls).forEach { $0.close() } }
        for index in 0..<count {
            let pull = try ZMQSocket(context: context, type: .pull)
            let push = try ZMQSocket(context: context, type: .push)
            pulls.append(pull)
            pushes.append(push)
            try pull.bind("inproc://\(name)-\(index)")
            try push.connect("inproc://\(name)-\(index)")
        }
        let poller = try ZMQManySocketPoller()
        let indices = try pulls.map { try poller.register($0) }
        #expect(indices == Array(0..<count))
        try body(pushes, pulls, poller)
    }

    @Test func timeoutReportsNothingWithinBoundedTime() throws {
        try withContext { context in try withPairs(context, 3, name: "many-timeout") { _, _, poller throws in
            #expect(poller.count == 3)
            #expect(try poller.readable(timeout: 0) == [])
            let clock = ContinuousClock()
            let start = clock.now
            #expect(try poller.readable(timeout: 50) == [])
            let elapsed = clock.now - start
            #expect(elapsed >= .milliseconds(40))
            #expect(elapsed < promptly)
        } }
    }

    @Test func onlyTheReadySocketsOfManyAreReportedEachOnce() throws {
        try withContext { context in try withPairs(context, 200, name: "many-ready") { pushes, pulls, poller throws in
            #expect(try poller.readable(timeout: 0) == [])
            for index in [7, 42, 199] {
                try pushes[index].send(bytes("a\(index)"))
                try pushes[index].send(bytes("b\(index)"))
            }
            #expect(try poller.readable(timeout: 5_000).sorted() == [7, 42, 199])
            for index in [7, 42, 199] {
                #expect(try pulls[index].tryReceiveMultipart() == [bytes("a\(index)")])
                #expect(try pulls[index].tryReceiveMultipart() == [bytes("b\(index)")])
            }
            #expect(try poller.readable(timeout: 0) == [])
        } }
    }

    /// Reading one of two messages processes the commands that had made the descriptor
    /// readable: the socket is asked again because the last wait reported it.
    @Test func messagesLeftAfterAPartialReadAreStillReported() throws {
        try withContext { context in
            try withPushPull(context, at: "inproc://many-partial") { push, pull throws in
                let poller = try ZMQManySocketPoller()
                let index = try poller.register(pull)
                for number in 0..<3 { try push.send(bytes("m\(number)")) }
                #expect(try poller.readable(timeout: 5_000) == [index])
                #expect(try pull.tryReceiveMultipart() == [bytes("m0")])
                #expect(try poller.readable(timeout: 0) == [index])
                #expect(try poller.readable(timeout: 5_000) == [index])
                #expect(try pull.tryReceiveMultipart() == [bytes("m1")])
                #expect(try pull.tryReceiveMultipart() == [bytes("m2")])
                #expect(try pull.tryReceiveMultipart() == nil)
                #expect(try poller.readable(timeout: 0) == [])
                #expect(try poller.readable(timeout: 20) == [])
                try push.send(bytes("m3"))
                #expect(try poller.readable(timeout: 5_000) == [index])
            }
        }
    }

    /// A socket used behind the poller's back (here a read the last wait did not report) is
    /// asked again when named with `noteUsed`.
    @Test func aSocketNamedAsUsedIsAskedBeforeTheNextWait() throws {
        try withContext { context in
            try withPushPull(context, at: "inproc://many-used") { push, pull throws in
                let poller = try ZMQManySocketPoller()
                let index = try poller.register(pull)
                #expect(try poller.readable(timeout: 0) == [])
                try push.send(bytes("x"))
                try push.send(bytes("y"))
                #expect(try receive(pull) == [bytes("x")])
                poller.noteUsed(index)
                #expect(try poller.readable(timeout: 5_000) == [index])
                #expect(try pull.tryReceiveMultipart() == [bytes("y")])
            }
        }
    }

    /// A reported socket its owner never drains is reported again, without a wait, and the
    /// others are still taken from the kernel meanwhile.
    @Test func anUndrainedSocketDoesNotHideTheOthers() throws {
        try withContext { context in try withPairs(context, 2, name: "many-undrained") { pushes, _, poller throws in
            try pushes[0].send(bytes("kept"))
            #expect(try poller.readable(timeout: 5_000) == [0])
            #expect(try poller.readable(timeout: 5_000) == [0])
            try pushes[1].send(bytes("other"))
            #expect(try poller.readable(timeout: 5_000).sorted() == [0, 1])
        } }
    }

    @Test func aMessageFromAnotherThreadWakesAWaitingPoller() throws {
        try withContext { context in
            let pull = try ZMQSocket(context: context, type: .pull)
            defer { pull.close() }
            try pull.bind("inproc://many-wake")
            let poller = try ZMQManySocketPoller()
            let index = try poller.register(pull)
            #expect(try poller.readable(timeout: 0) == [])
            sendFromAnotherThread(context, to: "inproc://many-wake", bytes("late"))
            // The sender's connecting also signals the descriptor: a wait may end with nothing
            // before the message, and the next one gets it.
            let deadline = ContinuousClock.now + promptly
            var found: [Int] = []
            while found.isEmpty && ContinuousClock.now < deadline {
                found = try poller.readable(timeout: 1_000)
            }
            #expect(found == [index], "woken within \(promptly)")
            #expect(try pull.tryReceiveMultipart() == [bytes("late")])
        }
    }

    @Test func aClosedSocketFailsTheWaitWithENOTSOCK() throws {
        try withContext { context in
            let pull = try ZMQSocket(context: context, type: .pull)
            let poller = try ZMQManySocketPoller()
            try poller.register(pull)
            pull.close()
            _ = expectZMQError(ENOTSOCK) { try poller.readable(timeout: 0) }
            _ = expectZMQError(ENOTSOCK) { try poller.register(pull) }
        }
    }
}
#endif
