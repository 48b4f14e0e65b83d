import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorWire
import Testing
import TestSupport

/// A worker's attempts time out on its deadline wheel as they did on a timer task each.
@Suite struct WorkerTimeoutTests {
    @Test func anAttemptPastItsTimeoutIsRetriedThenReportedTimedOut() async throws {
        let gate = Gate()
        try await withWorker(reactor: Counter(), effects: GatedEffects(gate: gate), configure: {
            $0.retry = RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(1), timeout: .milliseconds(50))
        }) { authority, worker in
            let peer = try await authority.register()
            let job = JobID(actionSeq: 4, effectIndex: 0)
            authority.send(.job(job, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            #expect(await authority.next()?.message == .failed(job: job, failure: EffectFailure(message: "timed out after 0.05 seconds", attempts: 2)))
            #expect(gate.started == 2)
            #expect(await eventually { worker.metrics.jobsFailed == 1 && worker.metrics.running == 0 })
        }
    }
}
