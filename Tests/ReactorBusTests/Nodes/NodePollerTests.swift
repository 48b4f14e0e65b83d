@testable import ReactorBus
import Testing
import ZeroMQ

/// The one receive loop: a bounded batch per ready socket per turn, wakeups drained, timers kept.
@Suite struct NodePollerTests {
    @Test func aTurnReadsAtMostABatchAndTheNextTurnReadsTheRest() throws {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let pull = try ZMQSocket(context: context, type: .pull)
        let push = try ZMQSocket(context: context, type: .push)
        defer {
            push.close()
            pull.close()
        }
        try pull.bind("inproc://node-poller-batch")
        try push.connect("inproc://node-poller-batch")
        for index in 0..<5 { try push.send([[UInt8(index)]]) }

        let poller = NodePoller(wakeup: try Mailbox<Void>())
        let index = try poller.register(pull)
        try poller.wait(until: MonotonicClock.milliseconds() + 10_000)
        var batch = poller.receive(pull, at: index, batch: 3)
        var first: [[[UInt8]]] = []
        while let frames = try batch.next() { first.append(frames) }
        #expect(first == [[[0]], [[1]], [[2]]])

        try poller.wait(until: MonotonicClock.milliseconds() + 10_000)
        batch = poller.receive(pull, at: index, batch: 3)
        var second: [[[UInt8]]] = []
        while let frames = try batch.next() { second.append(frames) }
        #expect(second == [[[3]], [[4]]])
    }

    @Test func aWakeupEndsTheWaitAndIsDrainedAndAnUnreadySocketGivesAnEmptyBatch() throws {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let pull = try ZMQSocket(context: context, type: .pull)
        defer { pull.close() }
        try pull.bind("inproc://node-poller-wakeup")
        let wakeup = try Mailbox<Void>()
        let poller = NodePoller(wakeup: wakeup)
        let index = try poller.register(pull)
        wakeup.post(())
        let clock = ContinuousClock()
        let waited = try clock.measure { try poller.wait(until: MonotonicClock.milliseconds() + 60_000, longest: 60_000) }
        #expect(waited < .seconds(30))
        #expect(wakeup.drain().isEmpty, "the poller drained the wakeup")
        var batch = poller.receive(pull, at: index, batch: 10)
        #expect(try batch.next() == nil)
        // A deadline already passed: no wait at all.
        let immediate = try clock.measure { try poller.wait(until: 0) }
        #expect(immediate < .seconds(5))
    }
}
