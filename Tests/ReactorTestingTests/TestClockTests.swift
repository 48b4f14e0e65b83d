import ReactorApps
import ReactorCore
import ReactorTesting
import Synchronization
import Testing

/// The clock a test moves by hand: sleeps end when the time passes their deadline, not before;
/// a cancelled task's sleep throws; a `Store`'s effect can be watched while it waits.
@Suite struct TestClockTests {
    /// The sleeps that ended, by their length in seconds.
    final class Ended: Sendable {
        private let values = Mutex<[Int]>([])
        func add(_ value: Int) { values.withLock { $0.append(value) } }
        var all: [Int] { values.withLock { $0 } }
    }

    @Test func aSleepEndsOnlyOnceTheTimeIsAdvancedToItsDeadline() async throws {
        let clock = TestClock()
        let ended = Ended()
        let sleeps = [30, 10, 20].map { seconds in
            Task {
                try await clock.sleep(for: .seconds(seconds))
                ended.add(seconds)
            }
        }
        defer { for sleep in sleeps { sleep.cancel() } }
        #expect(await clock.waitForSleeps(3))
        clock.advance(by: .seconds(9))
        #expect(clock.pendingSleeps == 3)
        clock.advance(by: .seconds(11))                 // 20 s: the 10 s and the 20 s sleeps end
        #expect(clock.pendingSleeps == 1)
        clock.advance(by: .seconds(10))
        #expect(clock.pendingSleeps == 0)
        for sleep in sleeps { try await sleep.value }
        #expect(Set(ended.all) == [10, 20, 30])
        // A deadline already reached does not wait.
        try await clock.sleep(until: clock.now)
        #expect(await clock.waitForSleeps(1, within: .milliseconds(20)) == false)
    }

    @Test func aCancelledTasksSleepEndsAtOnceWithCancellationError() async {
        let clock = TestClock()
        let sleep = Task { try await clock.sleep(for: .seconds(60)) }
        #expect(await clock.waitForSleeps(1))
        sleep.cancel()
        let outcome = await sleep.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(clock.pendingSleeps == 0)
    }

    @Test func aStoresSearchIsSeenWhileItPausesAndAfter() async {
        let clock = TestClock()
        let store = Store(reactor: Search(), effects: SearchEffects(), clock: clock)
        await store.send(.search(query: "q", pauseMilliseconds: 300))
        #expect(await clock.waitForSleeps(1))
        #expect(await store.state.results == ["q:1"])
        clock.advance(by: .milliseconds(299))
        #expect(clock.pendingSleeps == 1)
        clock.advance(by: .milliseconds(1))
        await store.waitUntilIdle()
        #expect(await store.state == Search.State(query: "q", results: ["q:1", "q:2"], finished: ["q"]))
    }

    @Test func aSearchReplacedWhileItPausesIsCancelledAndOnlyTheNewOneFinishes() async {
        let clock = TestClock()
        let store = Store(reactor: Search(), effects: SearchEffects(), clock: clock)
        await store.send(.search(query: "q", pauseMilliseconds: 300))
        #expect(await clock.waitForSleeps(1))
        clock.advance(by: .milliseconds(100))
        await store.send(.search(query: "r", pauseMilliseconds: 300))
        #expect(await clock.waitForSleeps(1))           // r's; q's ended with its task
        clock.advance(by: .milliseconds(299))
        #expect(clock.pendingSleeps == 1)
        clock.advance(by: .milliseconds(1))
        await store.waitUntilIdle()
        #expect(await store.state == Search.State(query: "r", results: ["q:1", "r:1", "r:2"], finished: ["r"], cancelled: ["q"]))
    }
}
