import Foundation
import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Synchronization
import Testing
import ZeroMQ
import TestSupport

/// The worker node against a fake authority (a ROUTER on its own thread, see `FakeWorkerAuthority`).
@Suite(.serialized) struct WorkerNodeTests {
    // MARK: - Registration and jobs

    @Test func readyAnnouncesTheWorkerAndAJobYieldsItsEmitThenDone() async throws {
        try await withWorker(reactor: Counter(), effects: CounterEffects(), configure: {
            $0.concurrency = 3
            $0.kinds = ["slowIncrease"]
        }) { authority, worker in
            let ready = try #require(await authority.next())
            // Three running and, by default, half as many again waiting (rounded up).
            #expect(ready.message == .ready(name: "w-test", app: "test", capacity: 5, kinds: ["slowIncrease"]))
            authority.send(.welcome(heartbeatMilliseconds: 1_000), to: ready.peer)
            #expect(await eventually { worker.metrics.isRegistered })

            let job = JobID(actionSeq: 7, effectIndex: 0)
            authority.send(.job(job, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: ready.peer)
            #expect(await authority.next()?.message == .emit(job: job, emitIndex: 0, payload: try encode(Counter.Mutation.increase)))
            #expect(await authority.next()?.message == .done(job: job, emitCount: 1))
            #expect(await eventually { worker.metrics.jobsDone == 1 })
            let metrics = worker.metrics
            #expect(metrics.jobsReceived == 1 && metrics.mutationsEmitted == 1 && metrics.jobsFailed == 0)
        }
    }

    @Test func toAnAuthorityThatReadsDoneWithEmitEveryJobIsReportedOnceWithItsMutation() async throws {
        // A hundred jobs held at a gate and let go at once. A job whose end comes in the same
        // batch of the worker's events as its mutation is one `done` carrying it (how many do
        // depends on the machine's scheduling; ReportBatchTests pins the rule), every other one
        // an `emit` and then a `done`.
        let gate = Gate(opensAtStarted: 100)
        try await withWorker(reactor: Counter(), effects: GatedEffects(gate: gate), configure: { $0.concurrency = 100 }) { authority, worker in
            let peer = try await authority.register()
            authority.send(.heartbeat(features: AuthorityFeature.all), to: peer)
            #expect(await authority.next()?.message == .features(WorkerFeature.all, maxMessageBytes: 1 << 20))
            let effect = try encode(Counter.Effect.slowIncrease), increase = try encode(Counter.Mutation.increase)
            for seq in 1 ... 100 { authority.send(.job(JobID(actionSeq: UInt64(seq), effectIndex: 0), kind: "slowIncrease", payload: effect), to: peer) }
            var emitted: [JobID: Int] = [:], ended: [JobID: Int] = [:]
            var combined = 0
            while ended.count < 100, let message = await authority.next()?.message {
                switch message {
                case .emit(let job, 0, increase):
                    emitted[job, default: 0] += 1
                case .done(let job, 1):
                    #expect(emitted[job] == 1, "the emit of \(job) came first")
                    ended[job, default: 0] += 1
                case .doneWithEmit(let job, 1, increase):
                    emitted[job, default: 0] += 1
                    ended[job, default: 0] += 1
                    combined += 1
                default:
                    Issue.record("unexpected \(message)")
                }
            }
            let jobs = Set((1 ... 100).map { JobID(actionSeq: UInt64($0), effectIndex: 0) })
            #expect(Set(ended.keys) == jobs && ended.values.allSatisfy { $0 == 1 })
            #expect(Set(emitted.keys) == jobs && emitted.values.allSatisfy { $0 == 1 })
            #expect(await eventually { worker.metrics.jobsDone == 100 })
            #expect(worker.metrics.combinedReports == UInt64(combined))
            // The authority named `report_batches`: the reports of jobs that end together came
            // together (the fake takes them apart, in order, as the authority reads them).
            #expect(authority.reportBatches >= 1)
            #expect(worker.metrics.mutationsEmitted == 100)
        }
    }

    @Test func aJobWhoseEffectIsOfAnotherKindThanAnnouncedIsRunAndWarnedAboutOncePerKind() async throws {
        let log = LogCapture()
        try await withWorker(reactor: Counter(), effects: CounterEffects(), log: log) { authority, worker in
            let peer = try await authority.register()
            let effect = try encode(Counter.Effect.slowIncrease)
            // The authority's app calls this effect "renamed" (another release): run all the same.
            for seq in 1 ... 3 { authority.send(.job(JobID(actionSeq: UInt64(seq), effectIndex: 0), kind: "renamed", payload: effect), to: peer) }
            authority.send(.job(JobID(actionSeq: 4, effectIndex: 0), kind: "slowIncrease", payload: effect), to: peer)
            #expect(await eventually { worker.metrics.jobsDone == 4 })
            #expect(log.containing("runs an effect of kind").count == 1)
            #expect(log.containing("runs an effect of kind 'slowIncrease' (announced as 'renamed'").count == 1)
        }
    }

    @Test func finishedJobsTasksAreKeptOnePerRunningJobUpToABound() {
        func kept(_ concurrency: Int) -> Int {
            WorkerConfiguration(authorityEndpoint: "", appName: "", concurrency: concurrency).reusableTasks
        }
        #expect(kept(1) == 1)
        #expect(kept(256) == 256)
        #expect(kept(1_024) == 1_024)
        #expect(kept(10_000) == 1_024)
    }

    @Test func checkedKindsRememberABoundedNumber() {
        let checked = CheckedKinds()
        #expect(checked.isFirst("a"))
        #expect(!checked.isFirst("a"))
        for index in 1 ..< CheckedKinds.limit { #expect(checked.isFirst("k\(index)")) }
        // Full: a kind seen before is still known, any other is checked every time.
        #expect(!checked.isFirst("a"))
        #expect(checked.isFirst("new"))
        #expect(checked.isFirst("new"))
        // The kind of the job before is known at once; it never makes another kind known.
        #expect(!checked.isFirst("k1"))
        #expect(!checked.isFirst("k1"))
        #expect(checked.isFirst("new"))
        #expect(!checked.isFirst("k2"))
    }

    @Test func withDoneWithEmitEveryMutationStillArrivesOnceAndInOrder() async throws {
        try await withWorker(reactor: Primes(), effects: PrimesEffects()) { authority, _ in
            let peer = try await authority.register()
            authority.send(.heartbeat(features: [AuthorityFeature.doneWithEmit]), to: peer)
            let job = JobID(actionSeq: 3, effectIndex: 1)
            authority.send(.job(job, kind: "factorize", payload: try encode(Primes.Effect.factorize(n: 360, delayMs: 0, ordered: false))), to: peer)
            // However the emits fall into the worker's batches, the last may ride on the `done`.
            var payloads: [[UInt8]] = []
            var declared: UInt32?
            for _ in 0 ..< 8 where declared == nil {
                switch await authority.next()?.message {
                case .emit(let emitted, let index, let payload)?:
                    #expect(emitted == job && index == UInt32(payloads.count))
                    payloads.append(payload)
                case .done(let done, let count)?:
                    #expect(done == job)
                    declared = count
                case .doneWithEmit(let done, let count, let payload)?:
                    #expect(done == job && count == UInt32(payloads.count + 1))
                    payloads.append(payload)
                    declared = count
                case let other:
                    Issue.record("unexpected \(String(describing: other))")
                    return
                }
            }
            let mutations = try payloads.map { try MessagePackDecoder().decode(Primes.Mutation.self, from: $0) }
            #expect(mutations == [2, 2, 2, 3, 3, 5].map { .prime(n: 360, factor: $0) } + [.finished(n: 360)])
            #expect(declared == 7)
        }
    }

    @Test func aNewSessionForgetsTheFeaturesOfTheLastOne() async throws {
        try await withWorker(reactor: Counter(), effects: CounterEffects()) { authority, worker in
            let peer = try await authority.register()
            authority.send(.heartbeat(features: AuthorityFeature.all), to: peer)
            #expect(await authority.next()?.message == .features(WorkerFeature.all, maxMessageBytes: 1 << 20))
            // The authority lost the worker (say it restarted as an older release): a new session.
            authority.send(.error(ref: 0, code: .unknownWorker, message: "who are you"), to: peer)
            guard case .ready? = await authority.next()?.message else {
                Issue.record("expected a new ready")
                return
            }
            #expect(worker.metrics.registrations == 2)
            authority.send(.welcome(heartbeatMilliseconds: 1_000), to: peer)
            let job = JobID(actionSeq: 1, effectIndex: 0)
            authority.send(.job(job, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            #expect(await authority.next()?.message == .emit(job: job, emitIndex: 0, payload: try encode(Counter.Mutation.increase)))
            #expect(await authority.next()?.message == .done(job: job, emitCount: 1))
        }
    }

    /// A worker names what it reads (`features`) only to an authority that named
    /// `job_batches`, once per session, and again after a new `ready`; the jobs of a `jobs`
    /// message run as if each had come alone.
    @Test func aWorkerSaysItReadsJobBatchesOnlyToAnAuthorityThatSendsThemAndRunsEachJobOfOne() async throws {
        try await withWorker(reactor: Counter(), effects: CounterEffects()) { authority, worker in
            let peer = try await authority.register()
            authority.send(.heartbeat(features: [AuthorityFeature.doneWithEmit]), to: peer)
            authority.send(.heartbeat(features: AuthorityFeature.all), to: peer)
            authority.send(.heartbeat(features: AuthorityFeature.all), to: peer)
            #expect(await authority.next()?.message == .features(WorkerFeature.all, maxMessageBytes: 1 << 20))
            let effect = try encode(Counter.Effect.slowIncrease), increase = try encode(Counter.Mutation.increase)
            let jobs = (1 ... 3).map { JobID(actionSeq: UInt64($0), effectIndex: 0) }
            authority.send(.jobs(jobs.map { JobBatch.Entry(job: $0, kind: "slowIncrease", payload: effect) }), to: peer)
            var done: [JobID] = []
            while done.count < 3, let message = await authority.next()?.message {
                switch message {
                case .emit(_, 0, increase):
                    continue
                case .done(let job, 1), .doneWithEmit(let job, 1, increase):
                    done.append(job)
                default:
                    Issue.record("unexpected \(message)")
                    return
                }
            }
            #expect(done.count == 3 && Set(done) == Set(jobs))
            #expect(await eventually { worker.metrics.jobsDone == 3 })
            // Said once: the heartbeats after the first named the feature again, and nothing came.
            #expect(authority.unread.isEmpty)

            // A new session (the authority lost the worker): it says so again once told again.
            authority.send(.error(ref: 0, code: .unknownWorker, message: "who are you"), to: peer)
            guard case .ready? = await authority.next()?.message else {
                Issue.record("expected a new ready")
                return
            }
            authority.send(.welcome(heartbeatMilliseconds: 1_000), to: peer)
            authority.send(.heartbeat(features: AuthorityFeature.all), to: peer)
            #expect(await authority.next()?.message == .features(WorkerFeature.all, maxMessageBytes: 1 << 20))
        }
    }

    @Test func primesEmitsEveryFactorInOrderThenFinishedThenDone() async throws {
        try await withWorker(reactor: Primes(), effects: PrimesEffects()) { authority, _ in
            let peer = try await authority.register()
            let job = JobID(actionSeq: 3, effectIndex: 1)
            authority.send(.job(job, kind: "factorize", payload: try encode(Primes.Effect.factorize(n: 360, delayMs: 0, ordered: false))), to: peer)

            var mutations: [Primes.Mutation] = []
            for expectedIndex in 0..<7 {
                guard case .emit(let emitted, let index, let payload)? = await authority.next()?.message else {
                    Issue.record("expected emit \(expectedIndex)")
                    return
                }
                #expect(emitted == job && index == UInt32(expectedIndex))
                mutations.append(try MessagePackDecoder().decode(Primes.Mutation.self, from: payload))
            }
            let factors: [Primes.Mutation] = [2, 2, 2, 3, 3, 5].map { .prime(n: 360, factor: $0) }
            #expect(mutations == factors + [.finished(n: 360)])
            #expect(await authority.next()?.message == .done(job: job, emitCount: 7))
        }
    }

    @Test func aFailingEffectIsRetriedThenReportedFailedWithItsAttemptsAndMessage() async throws {
        try await withWorker(reactor: Primes(), effects: PrimesEffects(), configure: {
            $0.retry = RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(1), timeout: nil)
        }) { authority, worker in
            let peer = try await authority.register()
            let job = JobID(actionSeq: 1, effectIndex: 0)
            authority.send(.job(job, kind: "factorize", payload: try encode(Primes.Effect.factorize(n: 0, delayMs: 0, ordered: false))), to: peer)
            #expect(await authority.next()?.message == .failed(job: job, failure: EffectFailure(message: "0 has no prime factorisation", attempts: 2)))
            #expect(await eventually { worker.metrics.jobsFailed == 1 })
        }
    }

    @Test func aMutationTooLargeToSendFailsItsJobAfterTheEmitsBeforeIt() async throws {
        // The job's second mutation encodes past the worker's message limit: it is never sent, so
        // the job cannot be done; it fails once the effect returns, naming the mutation and its
        // size, after the first mutation went out as usual.
        try await withWorker(reactor: Catalog(), effects: OversizedEmits(), configure: { $0.maxMessageBytes = 1_024 }) { authority, worker in
            let peer = try await authority.register()
            let job = JobID(actionSeq: 4, effectIndex: 0)
            authority.send(.job(job, kind: "none", payload: try encode(Catalog.Effect.none)), to: peer)
            #expect(await authority.next()?.message == .emit(job: job, emitIndex: 0, payload: try encode(OversizedEmits.small)))
            let size = try encode(OversizedEmits.large).count
            #expect(size > 1_024)
            let failure = EffectFailure(message: "mutation 1 is \(size) bytes, more than the 1024 a message may carry", attempts: 1)
            #expect(await authority.next()?.message == .failed(job: job, failure: failure))
            #expect(await eventually { worker.metrics.jobsFailed == 1 })
            #expect(worker.metrics.jobsDone == 0)
        }
    }

    @Test func anUndecodableEffectIsReportedFailedAndTheWorkerGoesOn() async throws {
        try await withWorker(reactor: Counter(), effects: CounterEffects()) { authority, _ in
            let peer = try await authority.register()
            let bad = JobID(actionSeq: 1, effectIndex: 0)
            authority.send(.job(bad, kind: "slowIncrease", payload: try encode(["nonsense": 1])), to: peer)
            guard case .failed(let job, let failure)? = await authority.next()?.message else {
                Issue.record("expected failed")
                return
            }
            #expect(job == bad && failure.attempts == 0)
            #expect(failure.message.contains("does not decode"))

            let good = JobID(actionSeq: 2, effectIndex: 0)
            authority.send(.job(good, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            #expect(await authority.next()?.message == .emit(job: good, emitIndex: 0, payload: try encode(Counter.Mutation.increase)))
            #expect(await authority.next()?.message == .done(job: good, emitCount: 1))
        }
    }

    // MARK: - Capacity

    @Test func twoJobsRunAtOnceWithConcurrencyTwo() async throws {
        // Each effect waits until both have started: run one after the other, neither finishes.
        let gate = Gate(opensAtStarted: 2)
        try await withWorker(reactor: Counter(), effects: GatedEffects(gate: gate), configure: {
            $0.concurrency = 2
            $0.retry = .once
        }) { authority, _ in
            let peer = try await authority.register()
            let jobs = [JobID(actionSeq: 1, effectIndex: 0), JobID(actionSeq: 2, effectIndex: 0)]
            for job in jobs {
                authority.send(.job(job, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            }
            var done: Set<JobID> = []
            for _ in 0..<4 {
                guard let message = await authority.next()?.message else { break }
                if case .done(let job, 1) = message { done.insert(job) }
            }
            #expect(done == Set(jobs))
            #expect(gate.started == 2)
        }
    }

    @Test func prefetchedJobsWaitThenJobsBeyondCapacityQueueWithAWarningThenAreRefused() async throws {
        try await withGatedWorker(concurrency: 1, prefetch: 1) { authority, worker, gate, log in
            let jobs = try sendSlowIncreases(4, to: try await authority.register(), from: authority)
            // One runs, one waits as announced (capacity 2), one more waits past the capacity
            // (an authority's mistake, tolerated up to `concurrency` more), the fourth is refused.
            #expect(await authority.next()?.message == .failed(job: jobs[3], failure: EffectFailure(message: "worker over capacity", attempts: 0)))
            #expect(await eventually { worker.metrics.running == 1 && worker.metrics.queued == 2 })
            #expect(log.containing("already run").count == 1)
            #expect(log.containing("job \(jobs[2]): 1 jobs already run and 1 wait (capacity 2); queued").count == 1)
            #expect(await eventually { gate.started == 1 })
            gate.open()
            // Each waiting job starts when the slot frees, oldest first, with no word from the authority.
            let increase = try encode(Counter.Mutation.increase)
            for job in jobs.prefix(3) {
                #expect(await authority.next()?.message == .emit(job: job, emitIndex: 0, payload: increase))
                #expect(await authority.next()?.message == .done(job: job, emitCount: 1))
            }
            #expect(gate.started == 3)
        }
    }

    @Test func withoutPrefetchTheWorkerAnnouncesItsConcurrencyAndASecondJobIsAWarnedExtra() async throws {
        try await withGatedWorker(concurrency: 1, prefetch: 0) { authority, worker, gate, log in
            let ready = try #require(await authority.next())
            #expect(ready.message == .ready(name: "w-test", app: "test", capacity: 1, kinds: []))
            authority.send(.welcome(heartbeatMilliseconds: 1_000), to: ready.peer)
            let jobs = try sendSlowIncreases(2, to: ready.peer, from: authority)
            #expect(await eventually { worker.metrics.running == 1 && worker.metrics.queued == 1 })
            #expect(log.containing("job \(jobs[1]): 1 jobs already run and 0 wait (capacity 1); queued").count == 1)
            gate.open()
            #expect(await eventually { worker.metrics.jobsDone == 2 })
        }
    }

    // MARK: - Heartbeats and reconnection

    @Test func anIdleWorkerHeartbeatsAndReconnectsWhenTheAuthorityFallsSilent() async throws {
        // 300 ms heartbeats: silence is noticed after about a second.
        try await withWorker(reactor: Counter(), effects: CounterEffects(), configure: {
            $0.heartbeatInterval = .milliseconds(300)
        }) { authority, worker in
            let first = try await authority.register(heartbeatMilliseconds: 300)
            #expect(await eventually(within: .seconds(10)) { authority.heartbeats.count >= 4 })
            let beats = authority.heartbeats.map(\.at)
            let gaps = zip(beats.dropFirst(), beats).map { $0 - $1 }
            // Roughly the interval: never faster, and not much slower even on a busy machine.
            #expect(gaps.allSatisfy { $0 >= 270 }, "gaps \(gaps)")
            #expect(gaps.allSatisfy { $0 <= 3_000 }, "gaps \(gaps)")
            #expect(worker.metrics.reconnects == 0)

            // Silent until the worker registers again; the fake welcomes it at once, so a test
            // task that runs late cannot stretch the silence into a second reconnection.
            authority.welcomeNextReady(heartbeatMilliseconds: 300)
            authority.setAnswersHeartbeats(false)
            let again = try #require(await authority.next())
            #expect(again.message == .ready(name: "w-test", app: "test", capacity: 3, kinds: []))
            #expect(again.peer != first, "a new socket has a new routing id")
            #expect(await eventually { worker.metrics.isRegistered })
            #expect(worker.metrics.reconnects == 1)
            #expect(worker.metrics.registrations == 2)
        }
    }

    @Test func unknownWorkerMakesTheWorkerRegisterAgain() async throws {
        try await withWorker(reactor: Counter(), effects: CounterEffects()) { authority, worker in
            let peer = try await authority.register()
            authority.send(.error(ref: 0, code: .unknownWorker, message: "who are you"), to: peer)
            let again = try #require(await authority.next())
            #expect(again.message == .ready(name: "w-test", app: "test", capacity: 3, kinds: []))
            #expect(again.peer == peer, "same socket, new registration")
            #expect(worker.metrics.registrations == 2 && worker.metrics.reconnects == 0)
        }
    }

    @Test func wrongAppStopsTheWorker() async throws {
        try await withWorker(reactor: Counter(), effects: CounterEffects()) { authority, worker in
            let ready = try #require(await authority.next())
            authority.send(.error(ref: 0, code: .wrongApp, message: "this authority runs primes"), to: ready.peer)
            #expect(await finishes(worker))
        }
    }

    @Test func runIsTheLifecycleCancellingItStopsGracefullyAndItThrowsWhyTheWorkerStoppedOnItsOwn() async throws {
        let context = try ZMQContext()
        let authority = try FakeWorkerAuthority(context: context)
        func makeWorker(_ name: String) -> WorkerNode<Counter, CounterEffects> {
            let configuration = WorkerConfiguration(authorityEndpoint: authority.endpoint, appName: "test", name: name, concurrency: 2)
            return WorkerNode(reactor: Counter(), effects: CounterEffects(), configuration: configuration,
                              logger: Logger(label: "test", sink: .discard), context: context)
        }
        // Cancelling the task is the graceful stop: the worker says bye, run() returns.
        let worker = makeWorker("w-run")
        let service = Task { try await worker.run() }
        let peer = try await authority.register(heartbeatMilliseconds: 60_000)
        service.cancel()
        try await service.value
        var last: FakeWorkerAuthority.Received?
        while let received = await authority.next(), received.peer == peer {
            last = received
            if received.message == .bye { break }
        }
        #expect(last?.message == .bye)
        #expect(worker.failure == nil)

        // Refused for its app, the worker stops on its own and run() throws why.
        let refused = makeWorker("w-refused")
        let failing = Task { try await refused.run() }
        let ready = try #require(await authority.next())
        authority.send(.error(ref: 0, code: .wrongApp, message: "this authority runs primes"), to: ready.peer)
        do {
            try await failing.value
            Issue.record("run() returned although the authority refused the app")
        } catch let error as ProtocolError {
            #expect(error.code == .wrongApp)
        }
        authority.close()
        #expect(context.terminate(timeout: promptly))
    }

    // MARK: - Stopping and robustness

    @Test func gracefulStopFinishesRunningJobsDeclinesNewOnesThenSaysBye() async throws {
        let gate = Gate()
        try await withWorker(reactor: Counter(), effects: GatedEffects(gate: gate)) { authority, worker in
            let peer = try await authority.register()
            let running = JobID(actionSeq: 1, effectIndex: 0)
            authority.send(.job(running, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            #expect(await eventually { gate.started == 1 })

            worker.stop()
            let late = JobID(actionSeq: 2, effectIndex: 0)
            authority.send(.job(late, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            #expect(await eventually { worker.metrics.jobsReceived == 2 })
            gate.open()

            #expect(await authority.next()?.message == .emit(job: running, emitIndex: 0, payload: try encode(Counter.Mutation.increase)))
            #expect(await authority.next()?.message == .done(job: running, emitCount: 1))
            #expect(await authority.next()?.message == .bye)
            #expect(await finishes(worker))
            #expect(worker.metrics.jobsDeclined == 1 && gate.started == 1)
            #expect(authority.unread.isEmpty)
        }
    }

    /// A job given again while the worker drains was written off by the authority, which may
    /// have dropped its old run's emits: the old run is cancelled and reports nothing, as outside
    /// a drain (where the job restarts); `bye` hands the job back.
    @Test func aJobGivenAgainDuringAGracefulStopIsNotReportedByItsOldRun() async throws {
        let gate = Gate()
        try await withWorker(reactor: Counter(), effects: GatedEffects(gate: gate)) { authority, worker in
            let peer = try await authority.register()
            let job = JobID(actionSeq: 1, effectIndex: 0)
            authority.send(.job(job, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            #expect(await eventually { gate.started == 1 })

            worker.stop()
            authority.send(.job(job, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            #expect(await eventually { worker.metrics.jobsReceived == 2 })
            gate.open()

            #expect(await authority.next()?.message == .bye, "no report of the old run")
            #expect(await finishes(worker))
            #expect(worker.metrics.jobsDeclined == 1 && gate.started == 1)
            #expect(authority.unread.isEmpty)
        }
    }

    @Test func aSecondStopCancelsRunningJobsAtOnce() async throws {
        let gate = Gate()
        try await withWorker(reactor: Counter(), effects: GatedEffects(gate: gate), configure: {
            $0.stopGracePeriod = .seconds(60)
        }) { authority, worker in
            let peer = try await authority.register()
            let job = JobID(actionSeq: 1, effectIndex: 0)
            authority.send(.job(job, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            #expect(await eventually { gate.started == 1 })
            worker.stop()
            worker.stop()
            #expect(await authority.next()?.message == .bye, "no result for the cancelled job")
            #expect(await finishes(worker))
        }
    }

    @Test func aMalformedMessageIsCountedAndTheWorkerKeepsWorking() async throws {
        try await withWorker(reactor: Counter(), effects: CounterEffects()) { authority, worker in
            let peer = try await authority.register()
            authority.sendRaw([[0xc1, 0xff, 0x00]], to: peer)
            #expect(await eventually { worker.metrics.malformedMessages == 1 })
            let job = JobID(actionSeq: 9, effectIndex: 2)
            authority.send(.job(job, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
            #expect(await authority.next()?.message == .emit(job: job, emitIndex: 0, payload: try encode(Counter.Mutation.increase)))
            #expect(await authority.next()?.message == .done(job: job, emitCount: 1))
        }
    }

    @Test func startFailsForAnInvalidEndpoint() throws {
        let context = try ZMQContext()
        defer { #expect(context.terminate(timeout: promptly)) }
        let configuration = WorkerConfiguration(authorityEndpoint: "nonsense://nowhere", appName: "test")
        let worker = WorkerNode(reactor: Counter(), effects: CounterEffects(), configuration: configuration,
                                logger: Logger(label: "test", sink: .discard), context: context)
        #expect(throws: ZMQError.self) { try worker.start() }
    }
}

// MARK: - Harness

/// Runs `body` with a fake authority and a started worker (named `w-test`, app `test`,
/// concurrency 2 and the default prefetch of 1: capacity 3), then stops the worker at once,
/// closes the fake and terminates the context, each within a deadline.
func withWorker<R: Reactor, H: EffectHandler>(
    reactor: R, effects: H,
    configure: (inout WorkerConfiguration) -> Void = { _ in },
    log: LogCapture? = nil,
    _ body: (FakeWorkerAuthority, WorkerNode<R, H>) async throws -> Void
) async throws where H.Effect == R.Effect, H.Mutation == R.Mutation {
    let context = try ZMQContext()
    let authority = try FakeWorkerAuthority(context: context)
    var configuration = WorkerConfiguration(authorityEndpoint: authority.endpoint, appName: "test", name: "w-test", concurrency: 2)
    configure(&configuration)
    let logger = log?.logger("test", level: .debug)
        ?? Logger(label: "test", level: .debug, sink: ProcessInfo.processInfo.environment["WORKER_TEST_LOGS"] == nil ? .discard : .standardError)
    let worker = WorkerNode(reactor: reactor, effects: effects, configuration: configuration, logger: logger, context: context)
    var failure: (any Error)?
    do {
        try worker.start()
        try await body(authority, worker)
    } catch {
        failure = error
    }
    worker.stop()
    worker.stop()
    #expect(await finishes(worker))
    authority.close()
    #expect(context.terminate(timeout: promptly))
    if let failure { throw failure }
}

/// ``withWorker`` for Counter's effects held at a ``Gate``, with this concurrency and prefetch,
/// its log captured at debug level.
func withGatedWorker(
    concurrency: Int, prefetch: Int,
    _ body: (FakeWorkerAuthority, WorkerNode<Counter, GatedEffects>, Gate, LogCapture) async throws -> Void
) async throws {
    let gate = Gate()
    let log = LogCapture()
    try await withWorker(reactor: Counter(), effects: GatedEffects(gate: gate), configure: {
        $0.concurrency = concurrency
        $0.prefetch = prefetch
    }, log: log) { authority, worker in
        try await body(authority, worker, gate, log)
    }
}

/// Sends `count` `slowIncrease` jobs (action sequence numbers 1 to `count`) to `peer`; their ids.
func sendSlowIncreases(_ count: Int, to peer: PeerID, from authority: FakeWorkerAuthority) throws -> [JobID] {
    let jobs = (1...count).map { JobID(actionSeq: UInt64($0), effectIndex: 0) }
    for job in jobs {
        authority.send(.job(job, kind: "slowIncrease", payload: try encode(Counter.Effect.slowIncrease)), to: peer)
    }
    return jobs
}

/// Whether the worker's `wait()` returns within `timeout`.
func finishes<R, H>(_ worker: WorkerNode<R, H>, within timeout: Duration = promptly) async -> Bool {
    let finished = Box(false)
    Task { await worker.wait(); finished.value = true }
    return await eventually(within: timeout) { finished.value }
}

/// MessagePack bytes of an app value.
func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    try MessagePackEncoder().encode(value)
}

/// Holds effects until the test opens it, or until enough of them have started.
final class Gate: Sendable {
    private let isOpen = Atomic<Bool>(false)
    private let startedCount = Atomic<Int>(0)
    private let opensAtStarted: Int

    /// A gate that only ``open()`` opens, or also `opensAtStarted` started effects.
    init(opensAtStarted: Int = .max) { self.opensAtStarted = opensAtStarted }

    /// How many effects have started.
    var started: Int { startedCount.load(ordering: .acquiring) }

    /// Lets every waiting and future effect through.
    func open() { isOpen.store(true, ordering: .releasing) }

    /// Counts one start, then waits (bounded, cancellable) until the gate opens.
    func pass() async throws {
        let count = startedCount.add(1, ordering: .acquiringAndReleasing).newValue
        if count >= opensAtStarted { open() }
        let deadline = ContinuousClock.now + promptly
        while !isOpen.load(ordering: .acquiring) {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Counts one start, then yields (bounded, cancellable) until the gate opens: every check
    /// enqueues the task on its executor again, without waiting on anything else.
    func passYielding() async throws {
        startedCount.add(1, ordering: .acquiringAndReleasing)
        let deadline = ContinuousClock.now + promptly
        while !isOpen.load(ordering: .acquiring) {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try Task.checkCancellation()
            await Task.yield()
        }
    }
}

/// Counter's effect, held at a ``Gate`` before it emits its increase.
/// Emits a small mutation, then one larger than a 1 KiB message.
struct OversizedEmits: EffectHandler {
    static let small = Catalog.Mutation.stored(key: 1, value: "small")
    static let large = Catalog.Mutation.stored(key: 2, value: String(repeating: "x", count: 2_000))

    func run(_ effect: Catalog.Effect, emit: Emitter<Catalog.Mutation>) async throws {
        await emit(Self.small)
        await emit(Self.large)
    }
}

struct GatedEffects: EffectHandler {
    let gate: Gate

    func run(_ effect: Counter.Effect, emit: Emitter<Counter.Mutation>) async throws {
        try await gate.pass()
        await emit(.increase)
    }
}
