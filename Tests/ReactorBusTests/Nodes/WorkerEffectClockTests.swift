@testable import ReactorBus
import ReactorApps
import ReactorCore
import ReactorWire
import Synchronization
import Testing
import TestSupport

/// A worker's effects wait on its loop's clock (``LoopClock``), on the loop thread and on the
/// shared pool alike: every sleep ends, none before its time, and each job is reported once.
@Suite(.serialized) struct WorkerEffectClockTests {
    /// Per job, the clock its effect saw and how long its sleep took.
    final class Sightings: Sendable {
        private let entries = Mutex<[(clock: String, slept: Duration)]>([])
        func record(clock: String, slept: Duration) { entries.withLock { $0.append((clock, slept)) } }
        var clocks: [String] { entries.withLock { $0.map(\.clock) } }
        var sleeps: [Duration] { entries.withLock { $0.map(\.slept) } }
    }

    /// Counter's effect, which notes the clock it is given and sleeps `pause` on it first.
    struct ClockedEffects: EffectHandler {
        let sightings: Sightings
        let pause: Duration
        func run(_ effect: Counter.Effect, emit: Emitter<Counter.Mutation>) async throws {
            let clock = ContinuousClock()
            let start = clock.now
            try await EffectClock.sleep(for: pause)
            sightings.record(clock: String(describing: type(of: EffectClock.current)), slept: clock.now - start)
            await emit(.increase)
        }
    }

    @Test(arguments: EffectThreads.allCases)
    func sleepingEffectsAreWokenByTheWorkersLoopNeverEarlyAndEachJobEndsOnce(threads: EffectThreads) async throws {
        let sightings = Sightings()
        let jobs = 50
        try await withWorker(reactor: Counter(), effects: ClockedEffects(sightings: sightings, pause: .milliseconds(30)), configure: {
            $0.concurrency = jobs
            $0.effectThreads = threads
        }) { authority, worker in
            let peer = try await authority.register()
            let effect = try encode(Counter.Effect.slowIncrease), increase = try encode(Counter.Mutation.increase)
            for seq in 1 ... jobs { authority.send(.job(JobID(actionSeq: UInt64(seq), effectIndex: 0), kind: "slowIncrease", payload: effect), to: peer) }
            var ended: [JobID: Int] = [:]
            while ended.count < jobs, let message = await authority.next()?.message {
                switch message {
                case .emit(_, 0, increase): continue
                case .done(let job, 1), .doneWithEmit(let job, 1, increase): ended[job, default: 0] += 1
                default: Issue.record("unexpected \(message)")
                }
            }
            #expect(Set(ended.keys) == Set((1 ... jobs).map { JobID(actionSeq: UInt64($0), effectIndex: 0) }))
            #expect(ended.values.allSatisfy { $0 == 1 })
            #expect(await eventually { worker.metrics.jobsDone == UInt64(jobs) })
            #expect(sightings.clocks == Array(repeating: "LoopClock", count: jobs))
            #expect(sightings.sleeps.allSatisfy { $0 >= .milliseconds(30) }, "\(sightings.sleeps)")
        }
    }
}
