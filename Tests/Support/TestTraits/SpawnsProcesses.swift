import Testing

/// Marks a suite whose tests start processes of their own: each test case runs while holding one
/// of the test process's ``ProcessSlots``, so only a few such tests share the machine at once.
///
/// ```swift
/// @Suite(.spawnsProcesses) struct FailoverTests { … }
/// ```
///
/// A test's reported duration and its `.timeLimit` include the wait for a slot; the deadlines
/// inside a test start after it.
package struct SpawnsProcesses: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    /// Only test cases hold a slot; a suite itself runs nothing.
    package func scopeProvider(for test: Test, testCase: Test.Case?) -> SpawnsProcesses? {
        testCase == nil ? nil : self
    }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await ProcessSlots.shared.withSlot(named: String(describing: test.id), function)
    }
}

extension Trait where Self == SpawnsProcesses {
    /// Tests that start processes of their own (see ``SpawnsProcesses``).
    package static var spawnsProcesses: SpawnsProcesses { SpawnsProcesses() }
}
