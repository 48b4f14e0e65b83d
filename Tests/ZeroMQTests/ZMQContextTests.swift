import Foundation
import Testing
import ZeroMQ
import TestSupport

@Suite struct ZMQContextTests {
    @Test func shutdownWakesABlockedReceiveWithTerminated() throws {
        let context = try ZMQContext()
        let outcome = Box<ZMQError?>(nil)
        let blocking = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { finished.signal() }
            do {
                let socket = try ZMQSocket(context: context, type: .pull)
                defer { socket.close() }
                try socket.bind("inproc://context-shutdown")
                blocking.signal()
                _ = try socket.receiveMultipart()
            } catch let error as ZMQError {
                outcome.value = error
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        #expect(blocking.wait(timeout: .now() + .seconds(10)) == .success)
        // Whether the receive is already blocked or about to start, it must end with ETERM.
        context.shutdown()
        #expect(finished.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(outcome.value?.code == ZMQError.Code.terminated)
        #expect(outcome.value?.function == "zmq_msg_recv")
        #expect(context.terminate(timeout: promptly))
    }

    @Test func terminateWakesABlockedReceiveAndFinishesOnceItsSocketCloses() throws {
        let context = try ZMQContext()
        let outcome = Box<ZMQError?>(nil)
        let blocking = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { finished.signal() }
            do {
                let socket = try ZMQSocket(context: context, type: .dealer)
                defer { socket.close() }
                try socket.connect("tcp://127.0.0.1:1")
                blocking.signal()
                _ = try socket.receiveMultipart()
            } catch let error as ZMQError {
                outcome.value = error
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        #expect(blocking.wait(timeout: .now() + .seconds(10)) == .success)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(context.terminate(timeout: promptly))
        #expect(clock.now - start < promptly)
        #expect(context.isTerminated)
        // The socket closes (and so terminate returns) before the thread records its error.
        #expect(finished.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(outcome.value?.isTerminated == true)
    }

    @Test func terminateGivesUpAtTheDeadlineWhileASocketIsOpen() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context: context, type: .pair)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(context.terminate(timeout: .milliseconds(100)) == false)
        let elapsed = clock.now - start
        #expect(elapsed >= .milliseconds(90))
        #expect(elapsed < promptly)
        #expect(!context.isTerminated)
        // Termination is in progress: the open socket now reports ETERM instead of blocking.
        expectZMQError(ZMQError.Code.terminated) { try socket.receiveMultipart() }
        socket.close()
        #expect(context.terminate(timeout: promptly))
        #expect(context.isTerminated)
    }

    @Test func terminateIsIdempotent() throws {
        let context = try ZMQContext(ioThreads: 2)
        #expect(!context.isShutDown)
        #expect(context.terminate(timeout: promptly))
        #expect(context.terminate(timeout: .zero))
        context.shutdown()
        #expect(context.isTerminated)
    }

    @Test func negativeIOThreadCountIsInvalidArgument() {
        expectZMQError(ZMQError.Code.invalidArgument) { try ZMQContext(ioThreads: -1) }
    }

    @Test func contextIsUsableFromConcurrentTasks() async throws {
        let context = try ZMQContext()
        let created = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    guard let socket = try? ZMQSocket(context: context, type: .pair) else { return false }
                    defer { socket.close() }
                    return (try? socket.bind("inproc://concurrent-\(index)")) != nil
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(created == 8)
        #expect(context.terminate(timeout: promptly))
    }
}
