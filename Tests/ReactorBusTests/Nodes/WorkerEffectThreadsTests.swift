import Foundation
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorWire
import Synchronization
import SystemCalls
import Testing
import ZeroMQ
import TestSupport

/// Where a worker runs its effects' code: its loop thread (named "worker"), until effects keep
/// it too busy, or the shared pool.
@Suite(.serialized) struct WorkerEffectThreadsTests {
    @Test func effectsRunOnTheWorkersLoopThreadByDefault() async throws {
        let probe = ThreadProbe(plans: [:])
        try await withWorker(reactor: Counter(), effects: ProbeEffects(probe: probe)) { authority, worker in
            let peer = try await authority.register()
            #expect(worker.metrics.effectsOnLoopThread)
            try sendJobs(1 ... 4, to: peer, from: authority)
            #expect(await eventually { worker.metrics.jobsDone == 4 })
            #expect(probe.threads(at: .start) == ["worker", "worker", "worker", "worker"], "\(probe.details(at: .start))")
            #expect(worker.metrics.effectsOnLoopThread)
        }
    }

    @Test func withPoolTheirCodeNeverRunsOnTheLoopThread() async throws {
        let probe = ThreadProbe(plans: [:])
        try await withWorker(reactor: Counter(), effects: ProbeEffects(probe: probe), configure: { $0.effectThreads = .pool }) { authority, worker in
            let peer = try await authority.register()
            #expect(!worker.metrics.effectsOnLoopThread)
            try sendJobs(1 ... 3, to: peer, from: authority)
            #expect(await eventually { worker.metrics.jobsDone == 3 })
            let threads = probe.threads(at: .start)
            #expect(threads.count == 3 && !threads.contains("worker"), "ran on \(probe.details(at: .start))")
        }
    }

    @Test func anEffectThatRunsTenMillisecondsWithoutAwaitingMovesEveryEffectToThePool() async throws {
        // Run 1 waits at the gate (on the loop); run 2 computes for 30 ms without awaiting; then
        // run 1 goes on, and runs 3 and 4 start: all of them on the pool.
        let gate = Gate()
        let probe = ThreadProbe(plans: [1: .gate(gate), 2: .spin(milliseconds: 30)])
        let log = LogCapture()
        try await withWorker(reactor: Counter(), effects: ProbeEffects(probe: probe), log: log) { authority, worker in
            let peer = try await authority.register()
            try sendJobs(1 ... 1, to: peer, from: authority)
            #expect(await eventually { gate.started == 1 })
            try sendJobs(2 ... 2, to: peer, from: authority)
            #expect(await eventually { worker.metrics.jobsDone == 1 })
            #expect(await eventually { !worker.metrics.effectsOnLoopThread })
            let warnings = log.containing("without suspending: effects run on the shared thread pool from now on")
            #expect(warnings.count == 1, "\(log.all)")
            #expect(warnings.first?.contains(" WARN ") == true)
            gate.open()
            try sendJobs(3 ... 4, to: peer, from: authority)
            #expect(await eventually { worker.metrics.jobsDone == 4 })
            #expect(probe.threads(at: .start).prefix(2) == ["worker", "worker"], "\(probe.details(at: .start))")
            let later = probe.threads(at: .start).dropFirst(2) + probe.threads(at: .afterGate)
            #expect(later.count == 3 && !later.contains("worker"), "ran on \(later)")
        }
    }

    @Test func effectsThatKeepTheLoopBusyMoveToThePoolAndEveryJobIsDone() async throws {
        // 3 ms each, under the longest slice, but back to back they take the whole loop.
        let jobs = 600
        let probe = ThreadProbe(plans: [:], everyRun: .spin(milliseconds: 3))
        let log = LogCapture()
        try await withWorker(reactor: Counter(), effects: ProbeEffects(probe: probe), configure: {
            $0.concurrency = 4
            $0.prefetch = jobs
        }, log: log) { authority, worker in
            // This fake authority sends no heartbeats: a long interval keeps the worker from
            // giving up on it while a loaded machine takes its time with 600 jobs.
            let peer = try await authority.register(heartbeatMilliseconds: 600_000)
            try sendJobs(1 ... jobs, to: peer, from: authority)
            var reported = Set<JobID>()
            while reported.count < jobs, let message = await authority.next()?.message {
                switch message {
                case .emit(let job, 0, _), .done(let job, 1), .doneWithEmit(let job, 1, _): reported.insert(job)
                case .heartbeat: continue
                default: Issue.record("unexpected \(message)")
                }
            }
            #expect(reported.count == jobs)
            #expect(await eventually { worker.metrics.jobsDone == UInt64(jobs) })
            #expect(!worker.metrics.effectsOnLoopThread)
            // Usually for their share of the loop's second; on a loaded machine one slice can
            // pass 10 ms of CPU first (seen in a debug build: a task's first slice, before its
            // effect began, so that every effect started on the pool). Either way, once.
            let moves = log.containing("effects run on the shared thread pool from now on")
            #expect(moves.count == 1, "\(log.containing("pool"))")
            let byShare = moves.first?.contains("% of the loop thread's time over") == true
            #expect(byShare || moves.first?.contains("ms on the loop thread without suspending") == true, "\(moves)")
            let threads = probe.threads(at: .start)
            let seen = "first \(probe.details(at: .start).first ?? "none"), last \(probe.details(at: .start).last ?? "none"); \(moves)"
            // Their share of the loop's time is the time effects ran there: the first ran there.
            #expect(!byShare || threads.first == "worker", "\(seen)")
            #expect(threads.count == jobs && threads.last != "worker", "\(seen)")
        }
    }

    @Test func anEffectThatOnlyYieldsLeavesTheLoopFreeToReadItsSocket() async throws {
        // Run 1 yields until the gate opens: each yield enqueues its task on the loop again,
        // from the loop's own effect code, which the loop runs in rounds without a wake-up. The
        // rounds are bounded, so the loop still reads its socket: run 2, sent while run 1 yields,
        // starts and is done on the loop thread. (Were they not, the loop would read run 2 only
        // after the watch moved effects to the pool, a second later, and run it there.)
        let gate = Gate()
        let probe = ThreadProbe(plans: [1: .yield(gate)])
        try await withWorker(reactor: Counter(), effects: ProbeEffects(probe: probe)) { authority, worker in
            let peer = try await authority.register()
            try sendJobs(1 ... 1, to: peer, from: authority)
            #expect(await eventually { gate.started == 1 })
            try sendJobs(2 ... 2, to: peer, from: authority)
            #expect(await eventually { worker.metrics.jobsDone == 1 })
            #expect(probe.threads(at: .start) == ["worker", "worker"], "\(probe.details(at: .start))")
            #expect(probe.ended == 1)
            gate.open()
            #expect(await eventually { worker.metrics.jobsDone == 2 })
            #expect(probe.threads(at: .afterGate) == ["worker"], "\(probe.details(at: .afterGate))")
        }
    }

    @Test func aStoppedWorkersSuspendedEffectsStillEndOnThePool() async throws {
        // Both effects wait at a gate that never opens: the stop cancels them after the loop's
        // last turn, and their tasks must still run to their end.
        let gate = Gate()
        let probe = ThreadProbe(plans: [:], everyRun: .gate(gate))
        try await withWorker(reactor: Counter(), effects: ProbeEffects(probe: probe), configure: { $0.stopGracePeriod = .zero }) { authority, worker in
            let peer = try await authority.register()
            try sendJobs(1 ... 2, to: peer, from: authority)
            #expect(await eventually { gate.started == 2 })
            worker.stop()
            worker.stop()
            #expect(await finishes(worker))
        }
        #expect(await eventually { probe.ended == 2 })
        #expect(probe.threads(at: .start) == ["worker", "worker"])
        let ends = probe.threads(at: .end)
        #expect(ends.count == 2 && !ends.contains("worker"), "ended on \(ends)")
    }

    private func sendJobs(_ seqs: ClosedRange<Int>, to peer: PeerID, from authority: FakeWorkerAuthority) throws {
        let effect = try encode(Counter.Effect.slowIncrease)
        for seq in seqs { authority.send(.job(JobID(actionSeq: UInt64(seq), effectIndex: 0), kind: "slowIncrease", payload: effect), to: peer) }
    }
}

/// What the probe's effects do and where they ran, by run (1, 2, ... in the order they started).
final class ThreadProbe: Sendable {
    enum Plan: Sendable {
        /// Waits at the gate (an await), then emits.
        case gate(Gate)
        /// Computes for this much CPU time without awaiting, then emits.
        case spin(milliseconds: Int)
        /// Yields until the gate opens, then emits.
        case yield(Gate)
    }

    enum Point: Sendable { case start, afterGate, end }

    private let plans: [Int: Plan]
    private let everyRun: Plan?
    private let runs = Atomic<Int>(0)
    /// Each note: the run, the point, the thread's kernel name and, for failure messages, its
    /// thread ID and Foundation's name for it.
    private let seen = Mutex<[(run: Int, point: Point, thread: String, detail: String)]>([])

    init(plans: [Int: Plan], everyRun: Plan? = nil) {
        self.plans = plans
        self.everyRun = everyRun
    }

    /// Numbers a new run and notes where it started.
    func start() -> (run: Int, plan: Plan?) {
        let run = runs.add(1, ordering: .relaxed).newValue
        note(run, .start)
        return (run, plans[run] ?? everyRun)
    }

    func note(_ run: Int, _ point: Point) {
        let thread = ThreadName.current() ?? "?"
        let id = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last ?? "?"
        let preference = withUnsafeCurrentTask { $0?.unownedTaskExecutor != nil }
        let detail = "\(thread) (thread \(id), Foundation's name \(Thread.current.name ?? "none"), executor preference \(preference))"
        seen.withLock { $0.append((run, point, thread, detail)) }
    }

    /// The threads of every run at `point`, in run order.
    func threads(at point: Point) -> [String] { notes(at: point).map(\.thread) }

    /// The same with each thread's ID and Foundation's name, for a failure's message: whether a
    /// wrongly named thread was the loop's (Foundation calls it "worker") or a pool thread.
    func details(at point: Point) -> [String] { notes(at: point).map(\.detail) }

    /// The notes at `point`, in run order.
    private func notes(at point: Point) -> [(run: Int, point: Point, thread: String, detail: String)] {
        seen.withLock { $0.filter { $0.point == point }.sorted { $0.run < $1.run } }
    }

    /// Runs that reached their end (returned or threw).
    var ended: Int { seen.withLock { $0.filter { $0.point == .end }.count } }
}

/// Counter's effects, each following the probe's plan for its run before it emits `increase`.
struct ProbeEffects: EffectHandler {
    let probe: ThreadProbe

    func run(_ effect: Counter.Effect, emit: Emitter<Counter.Mutation>) async throws {
        let (run, plan) = probe.start()
        defer { probe.note(run, .end) }
        switch plan {
        case .gate(let gate)?:
            try await gate.pass()
            probe.note(run, .afterGate)
        case .yield(let gate)?:
            try await gate.passYielding()
            probe.note(run, .afterGate)
        case .spin(let milliseconds)?:
            // CPU time, not the clock's: on a loaded machine the thread may be paused midway,
            // and the worker counts only what it computed.
            let until = LoopEffectExecutor.threadCPUTime() + UInt64(milliseconds) * 1_000_000
            while LoopEffectExecutor.threadCPUTime() < until {}
        case nil:
            break
        }
        await emit(.increase)
    }
}
