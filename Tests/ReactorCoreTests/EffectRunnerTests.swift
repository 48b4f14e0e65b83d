import Synchronization
import Testing
@testable import ReactorCore

@Suite struct EffectRunnerTests {
    struct Sleeper: EffectHandler {
        let duration: Duration
        func run(_ effect: Int, emit: Emitter<Int>) async throws {
            await emit(effect)
            try await Task.sleep(for: duration)
            await emit(effect + 1)
        }
    }

    final class Sink: Sendable {
        let received = Mutex<[UInt32: Int]>([:])
        func callAsFunction(_ index: UInt32, _ value: Int) { received.withLock { $0[index] = value } }
    }

    @Test func aSuccessfulRunReportsItsEmitCount() async {
        let sink = Sink()
        let outcome = await EffectRunner(handler: Sleeper(duration: .zero), policy: .once).run(10) { sink($0, $1) }
        #expect(outcome == .done(emitCount: 2))
        #expect(sink.received.withLock { $0 } == [0: 10, 1: 11])
    }

    @Test func anAttemptThatRunsTooLongTimesOutOnEveryAttempt() async {
        let policy = RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1), timeout: .milliseconds(20))
        let sink = Sink()
        let outcome = await EffectRunner(handler: Sleeper(duration: .seconds(60)), policy: policy).run(1) { sink($0, $1) }
        #expect(outcome == .failed(EffectFailure(message: "timed out after 0.02 seconds", attempts: 2)))
        #expect(sink.received.withLock { $0 } == [0: 1])
    }

    @Test func aTimeoutLongerThanOneStepStillWaitsItsWholeDuration() async {
        let policy = RetryPolicy(maxAttempts: 1, initialBackoff: .milliseconds(1), timeout: .milliseconds(180))
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = await EffectRunner(handler: Sleeper(duration: .seconds(60)), policy: policy).run(1) { _, _ in }
        #expect(clock.now - start >= .milliseconds(180))
        #expect(outcome == .failed(EffectFailure(message: "timed out after 0.18 seconds", attempts: 1)))
    }

    @Test func aCancelledStepwiseSleepEndsAtOnceWithCancellation() async {
        let sleeper = Task { try await EffectRunner<Sleeper>.sleep(for: .seconds(30)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func backoffDoublesUpToTheMaximum() {
        let policy = RetryPolicy(maxAttempts: 6, initialBackoff: .milliseconds(100), maxBackoff: .milliseconds(350))
        #expect((1...6).map { policy.backoff(beforeAttempt: $0) } == [
            .zero, .milliseconds(100), .milliseconds(200), .milliseconds(350), .milliseconds(350), .milliseconds(350),
        ])
        #expect(RetryPolicy(maxAttempts: 0).maxAttempts == 1)
    }

    @Test func effectKindsDefaultToTheCaseName() {
        enum Sample { case plain, payload(Int), labelled(by: String) }
        #expect(EffectKind.caseName(of: Sample.plain) == "plain")
        #expect(EffectKind.caseName(of: Sample.payload(3)) == "payload")
        #expect(EffectKind.caseName(of: Sample.labelled(by: "x")) == "labelled")
    }

    @Test func mutationsLiteralsAndNone() {
        let sync: Mutations<String, Int> = ["a", "b"]
        #expect(sync == Mutations(sync: ["a", "b"], async: []))
        #expect(Mutations<String, Int>(async: 1, 2) == Mutations(sync: [], async: [1, 2]))
        #expect(Mutations<String, Int>.none.isEmpty)
        #expect(!sync.isEmpty)
    }
}
