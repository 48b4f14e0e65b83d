import Foundation

/// A counting semaphore for the tests of one test process that spawn processes of their own.
///
/// `swift test` runs every test of the package in one process, in parallel. A test that starts an
/// authority, workers and clients (or an etcd) puts several busy processes on the machine; with
/// dozens of such tests at once on two cores, children take seconds to start and tests that wait
/// for events against deadlines miss them. At most ``limit`` such tests run at once; the others
/// wait for a slot before they start, so their own deadlines start with them.
///
/// The wait is bounded: a test that holds its slot for good (a child never reaped, an await that
/// never ends) would otherwise leave every later test waiting without a word. A waiter that has
/// not had a slot after ``maximumWait`` fails with ``WaitTimedOut``, which names the holders.
package actor ProcessSlots {
    /// The one set of slots of this test process: `REACTORBUS_TEST_PROCESS_SLOTS`, or the number of
    /// cores (at least 2); waits bounded by `REACTORBUS_TEST_SLOT_WAIT_SECONDS` (default 600).
    package static let shared = ProcessSlots(limit: configuredLimit(), maximumWait: configuredWait())

    /// Whether the current task holds a slot: a test case in nested suites that both ask takes one.
    @TaskLocal static var isHeld = false

    /// A wait for a slot that lasted ``ProcessSlots/maximumWait``: the tests holding the slots then
    /// and how long each had held its slot, longest first.
    package struct WaitTimedOut: Error, CustomStringConvertible {
        /// The waiting test.
        package let waiter: String
        /// The holders, longest first, with the time each had held its slot.
        package let holders: [(name: String, heldFor: Duration)]

        package var description: String {
            let list = holders.map { "\($0.name) (\($0.heldFor.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))))" }
            return "\(waiter) waited too long for a process slot; held by: \(list.joined(separator: ", "))"
        }
    }

    /// How many tests may hold a slot at once.
    package let limit: Int
    /// How long a test waits for a slot before it fails with ``WaitTimedOut``.
    package let maximumWait: Duration
    private var holders: [Int: (name: String, since: ContinuousClock.Instant)] = [:]
    private var waiting: [(ticket: Int, name: String, continuation: CheckedContinuation<Void, any Error>, timer: Task<Void, Never>)] = []
    private var nextTicket = 0

    package init(limit: Int, maximumWait: Duration = .seconds(600)) {
        self.limit = max(1, limit)
        self.maximumWait = maximumWait
    }

    /// Runs `body` while holding a slot (at once when the current task holds one already);
    /// `name` names the holder in another waiter's ``WaitTimedOut``.
    package nonisolated func withSlot(named name: String, _ body: @Sendable () async throws -> Void) async throws {
        if Self.isHeld {
            try await body()
            return
        }
        let ticket = try await acquire(name: name)
        do {
            try await Self.$isHeld.withValue(true) { try await body() }
        } catch {
            await release(ticket)
            throw error
        }
        await release(ticket)
    }

    /// The names of the tests holding a slot now, in no particular order.
    package var holderNames: [String] { holders.values.map(\.name) }

    /// How many tests are waiting for a slot now.
    package var waiterCount: Int { waiting.count }

    private func acquire(name: String) async throws -> Int {
        let ticket = nextTicket
        nextTicket += 1
        if holders.count < limit {
            holders[ticket] = (name, .now)
            return ticket
        }
        // The slot is handed over by `release`, which resumes the first waiter without freeing it.
        try await withCheckedThrowingContinuation { continuation in
            let wait = maximumWait
            let timer = Task { [weak self] in
                try? await Task.sleep(for: wait)
                guard !Task.isCancelled else { return }
                await self?.expire(ticket)
            }
            waiting.append((ticket, name, continuation, timer))
        }
        return ticket
    }

    /// Frees the slot, or hands it straight to the first test waiting for one.
    private func release(_ ticket: Int) {
        holders[ticket] = nil
        guard !waiting.isEmpty else { return }
        let next = waiting.removeFirst()
        next.timer.cancel()
        holders[next.ticket] = (next.name, .now)
        next.continuation.resume()
    }

    /// Ends a wait that lasted `maximumWait`, unless the waiter has had its slot meanwhile.
    private func expire(_ ticket: Int) {
        guard let index = waiting.firstIndex(where: { $0.ticket == ticket }) else { return }
        let waiter = waiting.remove(at: index)
        let now = ContinuousClock.now
        let held = holders.values.map { (name: $0.name, heldFor: now - $0.since) }.sorted { $0.heldFor > $1.heldFor }
        waiter.continuation.resume(throwing: WaitTimedOut(waiter: waiter.name, holders: held))
    }

    private static func configuredLimit() -> Int {
        if let text = ProcessInfo.processInfo.environment["REACTORBUS_TEST_PROCESS_SLOTS"], let value = Int(text), value > 0 {
            return value
        }
        return max(2, ProcessInfo.processInfo.activeProcessorCount)
    }

    private static func configuredWait() -> Duration {
        if let text = ProcessInfo.processInfo.environment["REACTORBUS_TEST_SLOT_WAIT_SECONDS"], let value = Int(text), value > 0 {
            return .seconds(value)
        }
        return .seconds(600)
    }
}
