import Testing
import TestTraits

/// The slots that keep process-spawning tests from crowding the machine: FIFO hand-over, nested
/// holds, and a bounded wait that names who holds the slots instead of hanging.
@Suite(.timeLimit(.minutes(1))) struct ProcessSlotsTests {
    /// Waiters get freed slots in the order they asked, and never more than `limit` run at once.
    @Test func handsSlotsOverInOrderWithinTheLimit() async throws {
        let slots = ProcessSlots(limit: 1, maximumWait: .seconds(60))
        let log = Log()
        let gate = Gate()
        let first = Task { try await slots.withSlot(named: "first") { await log.add("first in"); await gate.wait(); await log.add("first out") } }
        try await waitUntil { await slots.holderNames == ["first"] }
        let second = Task { try await slots.withSlot(named: "second") { await log.add("second") } }
        try await waitUntil { await slots.waiterCount == 1 }
        let third = Task { try await slots.withSlot(named: "third") { await log.add("third") } }
        try await waitUntil { await slots.waiterCount == 2 }
        #expect(await slots.holderNames == ["first"])
        await gate.open()
        try await first.value
        try await second.value
        try await third.value
        #expect(await log.entries == ["first in", "first out", "second", "third"])
        #expect(await slots.holderNames.isEmpty)
    }

    /// A test in nested suites that both ask for a slot holds one, not two (and does not deadlock
    /// against itself with one slot).
    @Test func aNestedHoldRunsInTheSlotAlreadyHeld() async throws {
        let slots = ProcessSlots(limit: 1, maximumWait: .seconds(60))
        let log = Log()
        try await slots.withSlot(named: "outer") {
            try await slots.withSlot(named: "inner") { await log.add("inner") }
        }
        #expect(await log.entries == ["inner"])
        #expect(await slots.holderNames.isEmpty)
    }

    /// A slot held for good makes the next waiter fail after the maximum wait, naming the holder;
    /// the slot stays with its holder, and the next waiter after it is released gets it at once.
    @Test func aWaitThatLastsTooLongFailsNamingTheHolders() async throws {
        let slots = ProcessSlots(limit: 1, maximumWait: .milliseconds(50))
        let gate = Gate()
        let holder = Task { try await slots.withSlot(named: "stuck test") { await gate.wait() } }
        try await waitUntil { await slots.holderNames == ["stuck test"] }
        await #expect(throws: ProcessSlots.WaitTimedOut.self) {
            try await slots.withSlot(named: "late test") { Issue.record("ran without a slot") }
        }
        do {
            try await slots.withSlot(named: "late test") {}
            Issue.record("expected the wait to time out")
        } catch let timedOut as ProcessSlots.WaitTimedOut {
            #expect(timedOut.waiter == "late test")
            #expect(timedOut.holders.map(\.name) == ["stuck test"])
            #expect(timedOut.holders.allSatisfy { $0.heldFor >= .milliseconds(50) })
            #expect(timedOut.description.hasPrefix("late test waited too long for a process slot; held by: stuck test ("))
        }
        #expect(await slots.waiterCount == 0)
        await gate.open()
        try await holder.value
        let log = Log()
        try await slots.withSlot(named: "next test") { await log.add("next") }
        #expect(await log.entries == ["next"])
    }
}

private actor Log {
    var entries: [String] = []
    func add(_ entry: String) { entries.append(entry) }
}

/// Holds its waiters until opened.
private actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
    func open() {
        isOpen = true
        waiters.forEach { $0.resume() }
        waiters = []
    }
}

/// Polls `condition` with short task sleeps for at most ten seconds.
private func waitUntil(_ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within 10 s")
            return
        }
        try await Task.sleep(for: .milliseconds(2))
    }
}
