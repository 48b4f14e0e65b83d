import Synchronization
import Testing
@testable import ReactorCore

/// ``SleepQueue`` holds its sleepers by hand (unretained in the heap, one reference each taken
/// when a sleep enters and given back when it leaves): every way out of the heap must give it
/// back exactly once. The queue's time is moved by the test (`resume(dueBy:)` with a fixed
/// instant), so nothing here depends on how fast the machine is.
@Suite struct SleepQueueTests {
    typealias Instant = ContinuousClock.Instant

    /// What each sleep's `wait` returned, by the sleep's number: `true`/`false`, or `nil` when
    /// it threw `CancellationError`.
    final class Results: Sendable {
        private let values = Mutex<[Int: Bool?]>([:])
        func record(_ index: Int, _ result: Bool?) { values.withLock { $0[index] = result } }
        var all: [Int: Bool?] { values.withLock { $0 } }
        var count: Int { values.withLock { $0.count } }
    }

    /// Starts `deadlines.count` sleeps (sleep `firstIndex + i` until `start + deadlines[i]`) and
    /// waits, with a bound, until they are all in the heap. The tasks enter the heap in the order
    /// the scheduler runs them, not in this order: a test that needs one group of equal deadlines
    /// ahead of another starts the groups one after the other.
    private func sleeps(on queue: SleepQueue, from start: Instant, _ deadlines: [Duration], firstIndex: Int = 0,
                        into results: Results) async -> [Task<Void, Never>] {
        let before = queue.sleeping
        let tasks = deadlines.enumerated().map { offset, deadline in
            Task {
                do {
                    results.record(firstIndex + offset, try await queue.wait(until: start + deadline, now: start))
                } catch {
                    results.record(firstIndex + offset, Bool?.none)
                }
            }
        }
        #expect(await eventually { queue.sleeping == before + deadlines.count })
        return tasks
    }

    /// The heap is empty, and (in debug builds, which count them) no sleeper of the queue lives on.
    private func expectEverySleeperGivenBack(_ queue: SleepQueue, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(queue.entries == 0, sourceLocation: sourceLocation)
        #if DEBUG
        #expect(queue.liveSleepers.value == 0, sourceLocation: sourceLocation)
        #endif
    }

    @Test func aSleepEndsOnceItsDeadlineIsPassedAndNotBefore() async {
        let queue = SleepQueue()
        let start = Instant.now
        let results = Results()
        let tasks = await sleeps(on: queue, from: start, [.seconds(30), .seconds(10), .seconds(20), .seconds(10)], into: results)
        #expect(queue.earliest() == start + .seconds(10))
        queue.resume(dueBy: { start + .seconds(10) - .nanoseconds(1) })
        #expect(queue.sleeping == 4)
        queue.resume(dueBy: { start + .seconds(10) })
        #expect(await eventually { results.count == 2 })
        #expect(Set(results.all.keys) == [1, 3])
        #expect(queue.earliest() == start + .seconds(20))
        queue.resume(dueBy: { start + .seconds(29) })
        #expect(await eventually { results.count == 3 })
        #expect(results.all[0] == nil)
        #expect(queue.sleeping == 1)
        queue.resume(dueBy: { start + .seconds(31) })
        for task in tasks { await task.value }
        #expect(results.all.values.allSatisfy { $0 == .some(true) })
        expectEverySleeperGivenBack(queue)
    }

    @Test func everyWayOutOfTheHeapGivesItsSleeperBack() async {
        let queue = SleepQueue()
        let start = Instant.now
        let results = Results()
        // 0..<40 come due, 40..<80 are cancelled while they wait, 80..<100 are still waiting
        // when the queue closes.
        // The sleeps to be cancelled enter the heap before the ones that stay, so that their
        // entries (same deadline) come first; in one group, a later task could enter first.
        let deadlines = (0..<80).map { index in index < 40 ? Duration.seconds(1) : .seconds(3_600) }
        let tasks = await sleeps(on: queue, from: start, deadlines, into: results)
            + sleeps(on: queue, from: start, Array(repeating: .seconds(3_600), count: 20), firstIndex: 80, into: results)
        for task in tasks[40..<80] { task.cancel() }
        #expect(await eventually { results.count == 40 })
        queue.resume(dueBy: { start + .seconds(2) })
        #expect(await eventually { results.count == 80 })
        #expect(queue.sleeping == 20)
        // The cancelled sleeps' entries come first (same deadline, entered earlier): dropped.
        #expect(queue.earliest() == start + .seconds(3_600))
        #expect(queue.entries == 20)
        queue.close()
        for task in tasks { await task.value }
        let all = results.all
        #expect((0..<40).allSatisfy { all[$0] == .some(true) })
        #expect((40..<80).allSatisfy { all[$0] == .some(nil) })
        #expect((80..<100).allSatisfy { all[$0] == .some(false) })
        expectEverySleeperGivenBack(queue)
    }

    @Test func cancelledSleepsDroppedWhenTheHeapCompactsAreGivenBack() async {
        let queue = SleepQueue()
        let start = Instant.now
        let results = Results()
        // As many as the heap holds before it first compacts.
        let cancelled = await sleeps(on: queue, from: start, Array(repeating: .seconds(3_600), count: 1_024), into: results)
        for task in cancelled { task.cancel() }
        for task in cancelled { await task.value }
        #expect(queue.entries == 1_024)
        // The next sleep finds the heap past its compaction size: the cancelled entries go.
        let last = Task { try? await queue.wait(until: start + .seconds(1), now: start) }
        #expect(await eventually { queue.sleeping == 1 })
        #expect(queue.entries == 1)
        #if DEBUG
        #expect(queue.liveSleepers.value == 1)
        #endif
        queue.resume(dueBy: { start + .seconds(1) })
        #expect(await last.value == true)
        #if DEBUG
        #expect(queue.liveSleepers.value == 0)
        #endif
    }

    @Test func aQueueDroppedWithEntriesGivesThemBack() async {
        var queue: SleepQueue? = SleepQueue()
        let start = Instant.now
        let results = Results()
        guard let held = queue else { return }
        let tasks = await sleeps(on: held, from: start, Array(repeating: .seconds(3_600), count: 10), into: results)
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        // Cancelled sleeps leave their entries in the heap until it compacts or is dropped.
        #expect(held.entries == 10)
        #if DEBUG
        let live = held.liveSleepers
        #expect(live.value == 10)
        #endif
        queue = nil
        _ = consume held
        #if DEBUG
        #expect(live.value == 0)
        #endif
        #expect(results.all.values.allSatisfy { $0 == .some(nil) })
    }

    @Test func aSleepWhoseDeadlineIsNotAfterNowDoesNotWait() async throws {
        let queue = SleepQueue()
        let now = Instant.now
        #expect(try await queue.wait(until: now, now: now) == true)
        #expect(try await queue.wait(until: now - .seconds(5), now: now) == true)
        #expect(queue.entries == 0)
        #expect(queue.earliest() == nil)
    }
}
