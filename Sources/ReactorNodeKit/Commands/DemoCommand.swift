import ArgumentParsing
import ReactorApps
import ReactorBus
import ReactorCore
import ReactorLog
import Synchronization
import ZeroMQ

/// `reactor-node demo`: the embedded all-in-one run — an authority, two workers, an observer and
/// a client in one process, talking over real ZeroMQ sockets on loopback.
enum DemoCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "demo",
            summary: "authority, two workers and an observer in one process, with scripted workloads of three apps",
            options: [
                .value("actions", "N", help: "counter actions to send (half countUp, half countUpAsync)", default: "20000"),
                .value("log-level", "LEVEL", help: "node logs on stderr", default: "warning"),
            ],
            discussion: "Shows live progress on stderr and a summary on stdout; exits 0 only when every check holds.",
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        let count = try CommonOptions.int(arguments, "actions", in: 2...10_000_000) / 2 * 2
        let logger = try CommonOptions.logger("demo", arguments)
        let context = try ZMQContext(ioThreads: 1)
        defer { context.terminate(timeout: .seconds(3)) }
        var checks: [(String, Bool)] = []

        Output.error("demo 1/3: counter — \(count) actions (half sync, half through 2 workers), one observer")
        let counter = try await LocalCluster(reactor: Counter(), effects: CounterEffects(), configuration: .loopback(app: "counter"),
                                             workerCount: 2, context: context, logger: logger)
        try counter.observer.start()
        let counterClient = try counter.client(logger: logger)
        let seen = Shared<(count: Int, versions: Int, increasing: Bool, last: UInt64)>((0, 0, true, 0))
        let watcher = Task {
            for await snapshot in counter.observer.snapshots() {
                seen.withLock { seen in
                    seen.increasing = seen.increasing && (seen.versions == 0 || snapshot.version > seen.last)
                    seen.last = snapshot.version
                    seen.versions += 1
                    seen.count = snapshot.state.count
                }
                if snapshot.state.count == count { break }
            }
        }
        let started = ContinuousClock.now
        let sent = Shared(0)
        let progress = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                let observed = seen.withLock { $0 }
                Output.error("  progress: \(sent.withLock { $0 })/\(count) acked, observer at version \(observed.last) (count \(observed.count))")
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<64 {
                group.addTask {
                    var index = lane
                    while index < count {
                        _ = try await counterClient.send(index.isMultiple(of: 2) ? .countUp : .countUpAsync)
                        sent.withLock { $0 += 1 }
                        index += 64
                    }
                }
            }
            try await group.waitForAll()
        }
        let sendSeconds = (ContinuousClock.now - started) / .seconds(1)
        let finished = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await watcher.value; return true }
            group.addTask { try? await Task.sleep(for: .seconds(30)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        progress.cancel()
        watcher.cancel()
        let observed = seen.withLock { $0 }
        let final = try await counterClient.snapshot()
        checks.append(("final count is exactly \(count)", final.state.count == count && finished))
        checks.append(("observer saw strictly increasing versions (\(observed.versions) snapshots)", observed.increasing))
        checks.append(("every async action ran on a worker", counter.workers.reduce(0) { $0 + $1.metrics.jobsDone } == count / 2))
        Output.line("counter: \(count) actions acked in \(String(format: "%.2f", sendSeconds)) s (\(Int(Double(count) / max(sendSeconds, 0.001))) actions/s), final state \(final.state.count) at version \(final.version)")
        counterClient.close()
        await counterClient.wait()
        await counter.shutdown()

        Output.error("demo 2/3: primes — factorisation on workers, an ordered lane that finishes out of order")
        let primes = try await LocalCluster(reactor: Primes(), effects: PrimesEffects(), configuration: .loopback(app: "primes"),
                                            workerCount: 2, context: context, logger: logger)
        try primes.observer.start()
        let primesClient = try primes.client(logger: logger)
        let numbers: [UInt64] = [600_851_475_143, 9_007_199_254_740_993, 1_000_000_007 * 97, 2 * 3 * 5 * 7 * 11 * 13 * 17 * 19 * 23]
        for number in numbers { _ = try await primesClient.send(.factor(n: number)) }
        // Slow first, fast last: the lane still applies them in the order they were sent.
        let ordered: [(UInt64, UInt32)] = [(360, 300), (97, 150), (1_024, 0)]
        for (number, delay) in ordered { _ = try await primesClient.send(.factorInOrder(n: number, delayMs: delay)) }
        _ = try await primesClient.send(.factor(n: 0))
        var state = try await primesClient.snapshot().state
        let deadline = ContinuousClock.now + .seconds(30)
        while state.completed.count < numbers.count + ordered.count || state.failures.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            state = try await primesClient.snapshot().state
        }
        let correct = state.completed.allSatisfy { entry in
            entry.factors.reduce(1, *) == entry.n && entry.factors.allSatisfy { PrimesEffects.primeFactors(of: $0) == [$0] }
        }
        let laneOrder = state.completed.map(\.n).filter { n in ordered.contains { $0.0 == n } }
        for entry in state.completed { Output.line("primes: \(entry.n) = \(entry.factors.map(String.init).joined(separator: " × "))") }
        checks.append(("every factorisation is a product of primes equal to n", correct && state.completed.count == numbers.count + ordered.count))
        checks.append(("the ordered lane applied 360, 97, 1024 in action order", laneOrder == ordered.map(\.0)))
        checks.append(("factorising 0 failed through the failure hook", state.failures.count == 1 && state.failures.first?.hasPrefix("0:") == true))
        primesClient.close()
        await primesClient.wait()
        await primes.shutdown()

        Output.error("demo 3/3: desk — two composed reactors, a quote feed (subscription), a lookup replaced in flight (cancellation), an initial and an expanding action (transforms)")
        checks += try await desk(context: context, logger: logger)

        Output.line("")
        for (name, ok) in checks { Output.line("\(ok ? "PASS" : "FAIL")  \(name)") }
        let failed = checks.filter { !$0.1 }.count
        Output.line("demo: \(checks.count - failed) passed, \(failed) failed")
        return failed == 0 ? 0 : 1
    }

    /// The desk app: a composed ticker and search, each feature checked on the final state.
    private static func desk(context: ZMQContext, logger: Logger) async throws -> [(String, Bool)] {
        let feed = TickerFeed(interval: .milliseconds(5))
        let desk = try await LocalCluster(reactor: Desk(), effects: ComposedEffects(Desk.effects()),
                                          subscriptions: ComposedSubscriptions(Desk.subscriptions(feed: feed)),
                                          configuration: .loopback(app: "desk"), workerCount: 2, context: context, logger: logger)
        let client = try desk.client(logger: logger)
        let opening = try await client.snapshot()
        // A slow lookup, replaced in flight by the lookup of `watch`, which also follows XYZ.
        _ = try await client.send(.lookup(.search(query: "slow", pauseMilliseconds: 60_000)))
        let watch = try await client.send(.watch(symbol: "XYZ", ticks: 40, pauseMilliseconds: 0))
        var state = try await client.snapshot().state
        let deadline = ContinuousClock.now + .seconds(30)
        var lastShown = ""
        while state.ticks < 50 || state.lookup.finished.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            state = try await client.snapshot().state
            let board = state.board.joined(separator: ", ")
            if board != lastShown {
                Output.error("  board: \(board)")
                lastShown = board
            }
        }
        Output.line("desk: board \(state.board.joined(separator: ", ")), lookups finished \(state.lookup.finished), cancelled \(state.lookup.cancelled)")
        client.close()
        await client.wait()
        await desk.shutdown()
        return [
            ("desk: a fresh state followed ACME once (initial action, version \(opening.version))", opening.state.quotes.targets == ["ACME": 10]),
            ("desk: watch, one action (one ack: action \(watch.actionSeq)), looked XYZ up and followed it",
             watch.actionSeq > 0 && state.quotes.targets["XYZ"] == 40 && state.lookup.finished == ["XYZ"]),
            ("desk: every tick of both feeds applied exactly once, in order (subscriptions)",
             state.quotes.ticks == ["ACME": Array(0..<10), "XYZ": Array(0..<40)] && state.ticks == 50),
            ("desk: the slow lookup was cancelled in flight and its cancel hook applied",
             state.lookup.cancelled == ["slow"] && state.lookup.finished == ["XYZ"] && !state.lookup.results.contains("slow:2")),
        ]
    }

    /// A value shared between the demo's tasks.
    final class Shared<Value: Sendable>: Sendable {
        private let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        func withLock<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
    }
}
