
#if canImport(Glibc)
import Foundation
import Glibc
import Testing
import ZeroMQ
import TestSupport
#endif

@Suite struct ZMQPollerTests {
    @Test func timeoutReportsNothingReadyWithinBoundedTime() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .pull)
            defer { socket.close() }
            try socket.bind("inproc://poller-timeout")
            let poller = ZMQPoller()
            let index = try poller.register(socket)
            let clock = ContinuousClock()
            let start = clock.now
            #expect(try poller.poll(timeout: 50) == 0)
            let elapsed = clock.now - start
            #expect(elapsed >= .milliseconds(40))
            #expect(elapsed < promptly)
            #expect(poller.events(at: index) == [])
            #expect(try poller.poll(timeout: 0) == 0)
        }
    }

    @Test func aNanosecondTimeoutIsWaitedOutInFullAndAMailboxPostEndsItEarly() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .pull)
            defer { socket.close() }
            try socket.bind("inproc://poller-nanoseconds")
            let mailbox = try Mailbox<Int>()
            let poller = ZMQPoller()
            _ = try poller.register(socket)
            let mailboxIndex = poller.register(mailbox)
            let clock = ContinuousClock()
            // Not a whole number of milliseconds: a wait rounded to them would end 0.5 ms early.
            for nanoseconds: UInt64 in [2_500_000, 7_300_000] {
                let start = clock.now
                #expect(try poller.poll(nanoseconds: nanoseconds) == 0)
                #expect(clock.now - start >= .nanoseconds(nanoseconds))
            }
            mailbox.post(1)
            let start = clock.now
            #expect(try poller.poll(nanoseconds: nil) == 1)
            #expect(poller.events(at: mailboxIndex) == [.readable])
            #expect(clock.now - start < promptly)
        }
    }

    @Test func severalReadySocketsAreAllReported() throws {
        try withContext { context in
            var sockets: [ZMQSocket] = []
            defer { sockets.forEach { $0.close() } }
            let poller = ZMQPoller()
            var readers: [Int] = []
            for index in 0..<4 {
                let pull = try ZMQSocket(context: context, type: .pull)
                let push = try ZMQSocket(context: context, type: .push)
                sockets += [pull, push]
                try pull.bind("inproc://poller-many-\(index)")
                try push.connect("inproc://poller-many-\(index)")
                readers.append(try poller.register(pull))
                if index < 3 { try push.send(bytes("ready-\(index)")) }
            }
            #expect(poller.count == 4)
            // inproc delivery is immediate, so one poll must see all three ready sockets.
            #expect(try poller.poll(timeout: 5000) == 3)
            #expect(readers.map { poller.isReadable($0) } == [true, true, true, false])
            #expect(poller.events(at: readers[0]) == .readable)
        }
    }

    @Test func writableInterestIsReported() throws {
        try withContext { context in
            let push = try ZMQSocket(context: context, type: .push)
            let pull = try ZMQSocket(context: context, type: .pull)
            defer { push.close(); pull.close() }
            try pull.bind("inproc://poller-writable")
            let poller = ZMQPoller()
            let index = try poller.register(push, for: [.readable, .writable])
            #expect(try poller.poll(timeout: 0) == 0)
            try push.connect("inproc://poller-writable")
            #expect(try poller.poll(timeout: 5000) == 1)
            #expect(poller.events(at: index) == .writable)
        }
    }

    @Test func rawFileDescriptorIsPolledNextToSockets() throws {
        try withContext { context in
            let socket = try ZMQSocket(context: context, type: .pull)
            defer { socket.close() }
            try socket.bind("inproc://poller-fd")
            var fds: [Int32] = [0, 0]
            try #require(pipe(&fds) == 0)
            defer { close(fds[0]); close(fds[1]) }
            let poller = ZMQPoller()
            let socketIndex = try poller.register(socket)
            let fdIndex = poller.register(fileDescriptor: fds[0])
            #expect(try poller.poll(timeout: 0) == 0)
            var byte: UInt8 = 42
            #expect(write(fds[1], &byte, 1) == 1)
            #expect(try poller.poll(timeout: 5000) == 1)
            #expect(poller.isReadable(fdIndex))
            #expect(!poller.isReadable(socketIndex))
        }
    }

    @Test func mailboxPostFromAnotherThreadWakesThePoller() throws {
        let mailbox = try Mailbox<Int>()
        let poller = ZMQPoller()
        let index = poller.register(mailbox)
        #expect(try poller.poll(timeout: 0) == 0)
        Thread.detachNewThread { mailbox.post(7) }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try poller.poll(timeout: 10_000) == 1)
        #expect(clock.now - start < promptly)
        #expect(poller.isReadable(index))
        #expect(mailbox.drain() == [7])
        #expect(try poller.poll(timeout: 0) == 0)
    }

    /// The poller reads a socket's `ZMQ_EVENTS` only when its descriptor signals or the socket
    /// was used since: messages left after a partial read must still be reported, although
    /// reading processed the commands that had made the descriptor readable.
    @Test func messagesLeftAfterAPartialReadAreStillReported() throws {
        try withContext { context in
            try withPushPull(context, at: "inproc://poller-partial") { push, pull throws in
                let poller = ZMQPoller()
                let index = try poller.register(pull)
                for number in 0..<3 { try push.send(bytes("m\(number)")) }
                #expect(try poller.poll(timeout: 5000) == 1)
                #expect(try pull.tryReceiveMultipart() == [bytes("m0")])
                // Two left: reported at once, however often the poller is asked.
                #expect(try poller.poll(timeout: 0) == 1)
                #expect(try poller.poll(timeout: 5000) == 1)
                #expect(poller.isReadable(index))
                #expect(try pull.tryReceiveMultipart() == [bytes("m1")])
                #expect(try pull.tryReceiveMultipart() == [bytes("m2")])
                #expect(try pull.tryReceiveMultipart() == nil)
                #expect(try poller.poll(timeout: 0) == 0)
                #expect(try poller.poll(timeout: 20) == 0)
                #expect(!poller.isReadable(index))
                try push.send(bytes("m3"))
                #expect(try poller.poll(timeout: 5000) == 1)
                #expect(try pull.tryReceiveMultipart() == [bytes("m3")])
            }
        }
    }

    /// A socket nobody touches wakes the poller through its descriptor alone: a message sent
    /// from another thread while the poller waits.
    @Test func aMessageFromAnotherThreadWakesAWaitingPoller() throws {
        try withContext { context in
            let pull = try ZMQSocket(context: context, type: .pull)
            defer { pull.close() }
            try pull.bind("inproc://poller-wake")
            let poller = ZMQPoller()
            let index = try poller.register(pull)
            #expect(try poller.poll(timeout: 0) == 0)
            sendFromAnotherThread(context, to: "inproc://poller-wake", bytes("late"))
            let clock = ContinuousClock()
            let start = clock.now
            #expect(try poller.poll(timeout: 10_000) == 1)
            #expect(clock.now - start < promptly)
            #expect(poller.isReadable(index))
            #expect(try pull.tryReceiveMultipart() == [bytes("late")])
        }
    }
}
