import Testing
@testable import ReactorBus

@Suite struct BusyBackoffTests {
    let policy = BusyBackoff(initial: .milliseconds(10), maximum: .milliseconds(100), giveUpAfter: .seconds(1))

    @Test func pausesDoubleFromInitialToMaximumWithinHalfToFullJitter() {
        #expect((0...6).map { policy.pauseMilliseconds(round: $0, unit: 1) } == [10, 20, 40, 80, 100, 100, 100])
        #expect((0...6).map { policy.pauseMilliseconds(round: $0, unit: 0) } == [5, 10, 20, 40, 50, 50, 50])
        #expect(policy.pauseMilliseconds(round: 1_000, unit: 0.5) == 75, "no shift overflow for long runs of refusals")
        #expect(policy.pauseMilliseconds(round: 0, unit: -3) == 5 && policy.pauseMilliseconds(round: 0, unit: 9) == 10, "unit is clamped")
    }

    @Test func policiesThatCannotWorkAreRefused() {
        #expect(throws: ClientError.self) { try BusyBackoff(initial: .zero).validate() }
        #expect(throws: ClientError.self) { try BusyBackoff(initial: .milliseconds(20), maximum: .milliseconds(10)).validate() }
        #expect(throws: ClientError.self) { try BusyBackoff(giveUpAfter: .milliseconds(-1)).validate() }
        #expect(throws: Never.self) { try BusyBackoff(giveUpAfter: .zero).validate() }
        var configuration = ActionClientConfiguration(actionsEndpoint: "tcp://127.0.0.1:1")
        configuration.connectTimeout = .zero
        #expect(throws: ClientError.invalidArgument("connectTimeout must be positive, got 0.0 seconds")) { try configuration.validated() }
    }
}
