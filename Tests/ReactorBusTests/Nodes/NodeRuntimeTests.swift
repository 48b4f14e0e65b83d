import Foundation
@testable import ReactorBus
import Synchronization
import Testing
import ZeroMQ
import TestSupport

/// The skeleton under every node: the start handshake, stopping, the lifecycle, call admission.
@Suite struct NodeRuntimeTests {
    /// A loop that reports the thread it was built on, records the one it runs on, and waits on
    /// its poller (a minute per turn) until stopped, counting its turns.
    final class ProbeLoop: NodeLoop {
        let ready: UInt
        let ranOn = NodeMetrics<UInt?>(nil)
        /// Set just before each wait: the wakeup is a pipe, so a stop posted after this ends that wait.
        let waiting = NodeMetrics(false)
        let runtime: NodeRuntime
        let poller: NodePoller
        let turns: NodeMetrics<Int>

        /// What the test keeps of a loop that lives on another thread.
        struct Seen: Sendable {
            let ranOn: NodeMetrics<UInt?>
            let waiting: NodeMetrics<Bool>
        }

        init(runtime: NodeRuntime, poller: NodePoller, turns: NodeMetrics<Int>) {
            ready = UInt(pthread_self())
            self.runtime = runtime
            self.poller = poller
            self.turns = turns
        }

        func run() {
            ranOn.publish(UInt(pthread_self()))
            while !runtime.isStopping {
                waiting.publish(true)
                try? poller.wait(until: MonotonicClock.milliseconds() + 60_000, longest: 60_000)
                turns.update { $0 += 1 }
            }
        }
    }

    struct BuildFailed: Error, Equatable {}

    @Test func theLoopIsBuiltOnTheNodesThreadWhichReportsReadyOnceAndAStopWakesIt() async throws {
        let runtime = NodeRuntime(name: "probe node")
        let turns = NodeMetrics(0)
        let loop = NodeMetrics<ProbeLoop.Seen?>(nil)
        let first = try runtime.start(mailboxFailure: { $0 }) { runtime, poller throws(ZMQError) in
            let built = ProbeLoop(runtime: runtime, poller: poller, turns: turns)
            loop.publish(ProbeLoop.Seen(ranOn: built.ranOn, waiting: built.waiting))
            return built
        } run: { $0.run() }
        guard case .ready(let builtOn) = first else { Issue.record("not ready: \(first)"); return }
        #expect(builtOn != UInt(pthread_self()), "built on the node's thread, not the caller's")
        #expect(runtime.hasStarted)
        let second = try await runtime.start { runtime, poller in ProbeLoop(runtime: runtime, poller: poller, turns: turns) } run: { $0.run() }
        guard case .alreadyStarted = second else { Issue.record("started twice: \(second)"); return }

        #expect(!runtime.isFinished)
        #expect(await FakeClientAuthority.eventually { loop.value?.waiting.value == true })
        #expect(runtime.stop() == 1)
        // The loop waits a minute per turn: only the wakeup ends this wait in time.
        let clock = ContinuousClock()
        let waited = await clock.measure { await runtime.wait() }
        #expect(waited < .seconds(30))
        #expect(runtime.isFinished)
        #expect(turns.value == 1)
        #expect(loop.value?.ranOn.value == builtOn, "built and run on the same thread")
        #expect(runtime.stop() == 2)
        #expect(runtime.isStoppingAtOnce)
    }

    @Test func aLoopThatCannotBeBuiltIsThrownByStartAndTheNodeIsFinishedAndRefusesCalls() throws {
        let runtime = NodeRuntime(name: "failing node")
        #expect(throws: BuildFailed()) {
            _ = try runtime.start(mailboxFailure: { _ in BuildFailed() }) { _, _ throws(BuildFailed) -> ProbeLoop in
                throw BuildFailed()
            } run: { $0.run() }
        }
        #expect(runtime.hasStarted)
        // The thread ends right after its report; wait for that with a deadline.
        let deadline = ContinuousClock.now + .seconds(10)
        while !runtime.isFinished, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.002) }
        #expect(runtime.isFinished)
        #expect(!runtime.admit { Issue.record("a call was admitted by a node that never ran") })
    }

    @Test func callsAreAdmittedOnlyFromTheStartUntilTheyAreRefused() async throws {
        let runtime = NodeRuntime(name: "calls")
        let posted = NodeMetrics(0)
        #expect(!runtime.admit { posted.update { $0 += 1 } }, "not started")
        let turns = NodeMetrics(0)
        _ = try await runtime.start { runtime, poller in ProbeLoop(runtime: runtime, poller: poller, turns: turns) } run: { $0.run() }
        #expect(runtime.admit { posted.update { $0 += 1 } })
        #expect(runtime.refuseCalls())
        #expect(!runtime.refuseCalls(), "already refused")
        #expect(!runtime.admit { posted.update { $0 += 1 } })
        #expect(posted.value == 1)
        runtime.stop()
        await runtime.wait()
    }

    @Test func servingEndsWhenTheNodeStopsAndCancellingTheTaskIsTheNodesOwnStop() async throws {
        let runtime = NodeRuntime(name: "service")
        let turns = NodeMetrics(0)
        _ = try await runtime.start { runtime, poller in ProbeLoop(runtime: runtime, poller: poller, turns: turns) } run: { $0.run() }
        let stops = NodeMetrics(0)
        let service = Task {
            await runtime.serve {
                stops.update { $0 += 1 }
                runtime.stop()
            }
        }
        #expect(await FakeClientAuthority.eventually { turns.value == 0 && runtime.hasStarted && !runtime.isFinished })
        service.cancel()
        await service.value
        #expect(runtime.isFinished)
        #expect(stops.value == 1)
    }

    @Test func waitingOnANodeThatNeverStartedReturnsAtOnce() async {
        let runtime = NodeRuntime(name: "idle")
        await runtime.wait()
        #expect(!runtime.hasStarted)
        #expect(!runtime.isFinished)
    }
}
