import Foundation

/// A counting semaphore for the tests of one test process that spawn processes of their own.
///
/// `swift test` runs every test of the package in one process, in parallel. A test that starts an
/// authority, workers and clients (or an etcd) puts several busy processes on the machine; with
/// dozens of such tests at once on two cores, children take seconds to start and tests that wait
/// for events against deadlines miss them. At most ``limit`` such tests run at once; the others
/// wait for a slot before they start, so their own deadlines start with them.
package actor ProcessSlots {
    /// The one set of slots of this test process: `REACTORBUS_TEST_PROCESS_SLOTS`, or the number of
    /// cores (at least 2).
    package static let shared = ProcessSlots(limit: configuredLimit())

    /// Whether the current task holds a slot: a test case in nested suites that both ask takes one.
    @TaskLocal static var isHeld = false

    /// How many tests may hold a slot at once.
    package let limit: Int
    private var held = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` while holding a slot (at once when the current task holds one already).
    package nonisolated func withSlot(_ body: @Sendable () async throws -> Void) async throws {
        if Self.isHeld {
            try await body()
            return
        }
        await acquire()
        do {
            try await Self.$isHeld.withValue(true) { try await body() }
        } catch {
            await release()
            throw error
        }
        await release()
    }

    private func acquire() async {
        if held < limit {
            held += 1
            return
        }
        // The slot is handed over by `release`, which resumes the first waiter without freeing it.
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Frees the slot, or hands it straight to the first test waiting for one.
    private func release() {
        if waiting.isEmpty {
            held -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    private static func configuredLimit() -> Int {
        if let text = ProcessInfo.processInfo.environment["REACTORBUS_TEST_PROCESS_SLOTS"], let value = Int(text), value > 0 {
            return value
        }
        return max(2, ProcessInfo.processInfo.activeProcessorCount)
    }
}
