import Foundation
import Testing
import ZeroMQ
import TestSupport

@Suite struct MailboxTests {
    @Test func drainReturnsPostsInOrderAndResetsTheWakeUp() throws {
        let mailbox = try Mailbox<String>()
        let poller = ZMQPoller()
        poller.register(mailbox)
        #expect(mailbox.drain() == [])
        mailbox.post("a")
        mailbox.post("b")
        #expect(mailbox.pendingCount == 2)
        #expect(try poller.poll(timeout: 0) == 1)
        #expect(mailbox.drain() == ["a", "b"])
        #expect(mailbox.pendingCount == 0)
        #expect(try poller.poll(timeout: 0) == 0)
        mailbox.post("c")
        #expect(try poller.poll(timeout: 0) == 1)
        #expect(mailbox.drain() == ["c"])
    }

    @Test func closingReturnsWhatWasNotDrainedAndRefusesLaterPosts() throws {
        let mailbox = try Mailbox<String>()
        let poller = ZMQPoller()
        poller.register(mailbox)
        #expect(mailbox.post("a"))
        #expect(mailbox.drain() == ["a"])
        #expect(mailbox.post("b"))
        #expect(mailbox.post("c"))
        #expect(mailbox.pendingCount == 2)
        #expect(mailbox.closeForPosting() == ["b", "c"])
        // Closed: nothing is kept, and the descriptor no longer wakes a poller.
        #expect(!mailbox.post("d"))
        #expect(mailbox.pendingCount == 0)
        #expect(try poller.poll(timeout: 0) == 0)
        #expect(mailbox.drain() == [])
        #expect(mailbox.closeForPosting() == [])
    }

    @Test func drainingAfterRunningCodeThatPostsNeedsNoWakeUp() throws {
        let mailbox = try Mailbox<String>()
        let poller = ZMQPoller()
        poller.register(mailbox)
        // Posts while the body runs append without touching the descriptor.
        let items = mailbox.drain(afterRunning: {
            mailbox.post("a")
            mailbox.post("b")
        })
        #expect(items == ["a", "b"])
        #expect(try poller.poll(timeout: 0) == 0)
        // A post from before wakes the descriptor as usual, and the drain after the body clears it.
        mailbox.post("c")
        #expect(try poller.poll(timeout: 0) == 1)
        #expect(mailbox.drain(afterRunning: { mailbox.post("d") }) == ["c", "d"])
        #expect(try poller.poll(timeout: 0) == 0)
        // After the drain, posts wake the loop again.
        mailbox.post("e")
        #expect(try poller.poll(timeout: 0) == 1)
        #expect(mailbox.drain() == ["e"])
    }

    @Test func aBodyThatThrowsDrainsNothingAndItsPostsWakeTheLoop() throws {
        struct Refused: Error {}
        let mailbox = try Mailbox<String>()
        let poller = ZMQPoller()
        poller.register(mailbox)
        #expect(throws: Refused.self) {
            _ = try mailbox.drain(afterRunning: { () throws(Refused) in
                mailbox.post("a")
                throw Refused()
            })
        }
        #expect(try poller.poll(timeout: 0) == 1)
        #expect(mailbox.drain() == ["a"])
        // A body that throws before anything was posted leaves the mailbox quiet and working.
        #expect(throws: Refused.self) { _ = try mailbox.drain(afterRunning: { () throws(Refused) in throw Refused() }) }
        #expect(try poller.poll(timeout: 0) == 0)
        mailbox.post("b")
        #expect(try poller.poll(timeout: 0) == 1)
        #expect(mailbox.drain() == ["b"])
    }

    @Test func drainingIntoABufferReplacesItsContents() throws {
        let mailbox = try Mailbox<String>()
        let poller = ZMQPoller()
        poller.register(mailbox)
        var buffer = ["stale", "items"]
        mailbox.post("a")
        mailbox.post("b")
        #expect(try poller.poll(timeout: 0) == 1)
        mailbox.drain(into: &buffer)
        #expect(buffer == ["a", "b"])
        #expect(mailbox.pendingCount == 0)
        #expect(try poller.poll(timeout: 0) == 0)
        // Posts after the drain land in the storage the buffer gave up, and wake the loop.
        for index in 0 ..< 100 { mailbox.post("p\(index)") }
        #expect(try poller.poll(timeout: 0) == 1)
        mailbox.drain(into: &buffer)
        #expect(buffer == (0 ..< 100).map { "p\($0)" })
        mailbox.drain(into: &buffer)
        #expect(buffer == [])
        // The same with code that posts while it runs: no wake-up, and a body that throws
        // leaves the buffer empty and its posts waking the loop.
        mailbox.drain(into: &buffer, afterRunning: { mailbox.post("c") })
        #expect(buffer == ["c"])
        #expect(try poller.poll(timeout: 0) == 0)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try mailbox.drain(into: &buffer, afterRunning: { () throws(Refused) in
                mailbox.post("d")
                throw Refused()
            })
        }
        #expect(buffer == [])
        #expect(try poller.poll(timeout: 0) == 1)
        mailbox.drain(into: &buffer)
        #expect(buffer == ["d"])
    }

    @Test func manyConcurrentProducersDeliverExactlyOnceInPerProducerOrder() async throws {
        struct Item: Sendable { let producer: Int; let sequence: Int }
        let producers = 16
        let perProducer = 2_000
        let mailbox = try Mailbox<Item>()
        let received = Box<[Item]>([])
        let loopDone = DispatchSemaphore(value: 0)

        // The loop thread: poll the mailbox's descriptor, drain, until everything arrived or time runs out.
        Thread.detachNewThread {
            defer { loopDone.signal() }
            let poller = ZMQPoller()
            poller.register(mailbox)
            var items: [Item] = []
            let deadline = ContinuousClock.now + promptly
            while items.count < producers * perProducer && ContinuousClock.now < deadline {
                guard (try? poller.poll(timeout: 100)) != nil else { break }
                items += mailbox.drain()
            }
            received.value = items
        }

        await withTaskGroup(of: Void.self) { group in
            for producer in 0..<producers {
                group.addTask {
                    for sequence in 0..<perProducer {
                        mailbox.post(Item(producer: producer, sequence: sequence))
                    }
                }
            }
        }
        #expect(loopDone.wait(timeout: .now() + .seconds(20)) == .success)

        let items = received.value
        #expect(items.count == producers * perProducer)
        var perProducerSequences = [[Int]](repeating: [], count: producers)
        for item in items { perProducerSequences[item.producer].append(item.sequence) }
        for sequences in perProducerSequences {
            #expect(sequences == Array(0..<perProducer))
        }
        #expect(mailbox.drain().isEmpty)
    }
}
