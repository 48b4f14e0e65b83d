import Testing
@testable import ReactorBus

@Suite struct ReplyBudgetTests {
    let alice: [UInt8] = [0, 1, 2, 3, 4]
    let bob: [UInt8] = [0, 9, 9, 9, 9]

    @Test func aMessageCostsItsFramesBytesPlusTheOverhead() {
        #expect(ReplyBudget.cost(of: [[1, 2, 3], [], [UInt8](repeating: 0, count: 1_000)]) == 1_003 + ReplyBudget.messageOverhead)
        #expect(ReplyBudget.cost(of: []) == ReplyBudget.messageOverhead)
    }

    @Test func chargesAddUpExactlyPerClientUntilTheLimitThenRefuse() throws {
        let budget = ReplyBudget(limit: 1_000)
        let first = try #require(budget.charge(client: alice, bytes: 400))
        #expect(budget.queuedBytes(client: alice) == 400)
        let second = try #require(budget.charge(client: alice, bytes: 600))
        #expect(second === first)
        // Exactly at the limit: anything more is refused, and a refusal charges nothing.
        #expect(budget.queuedBytes(client: alice) == 1_000)
        #expect(budget.charge(client: alice, bytes: 1) == nil)
        #expect(budget.queuedBytes(client: alice) == 1_000)
        // Another client has its own budget.
        #expect(budget.charge(client: bob, bytes: 1_000) != nil)
        #expect(budget.queuedBytes(client: bob) == 1_000)
    }

    @Test func releasedBytesMakeRoomAgain() throws {
        let budget = ReplyBudget(limit: 1_000)
        let account = try #require(budget.charge(client: alice, bytes: 700))
        #expect(budget.charge(client: alice, bytes: 301) == nil)
        account.release(1)
        #expect(budget.queuedBytes(client: alice) == 699)
        #expect(budget.charge(client: alice, bytes: 301) != nil)
        #expect(budget.queuedBytes(client: alice) == 1_000)
        account.release(700)
        account.release(300)
        #expect(budget.queuedBytes(client: alice) == 0)
    }

    @Test func oneReplyGoesOutWhenNothingIsQueuedEvenIfLargerThanTheLimit() throws {
        let budget = ReplyBudget(limit: 1_000)
        let account = try #require(budget.charge(client: alice, bytes: 5_000))
        #expect(budget.queuedBytes(client: alice) == 5_000)
        #expect(budget.charge(client: alice, bytes: 1) == nil)
        account.release(5_000)
        #expect(budget.charge(client: alice, bytes: 5_000) != nil)
    }

    @Test func releasesFromOtherThreadsAreAllCounted() async throws {
        let budget = ReplyBudget(limit: 1 << 30)
        var accounts: [ReplyBudget.Account] = []
        for _ in 0..<1_000 { accounts.append(try #require(budget.charge(client: alice, bytes: 3))) }
        #expect(budget.queuedBytes(client: alice) == 3_000)
        await withTaskGroup(of: Void.self) { group in
            for account in accounts { group.addTask { account.release(3) } }
        }
        #expect(budget.queuedBytes(client: alice) == 0)
    }

    @Test func pruningForgetsOnlyClientsWithNothingQueued() throws {
        let budget = ReplyBudget(limit: 1_000)
        let account = try #require(budget.charge(client: alice, bytes: 10))
        _ = try #require(budget.charge(client: bob, bytes: 20))
        account.release(10)
        budget.prune()
        #expect(budget.clientCount == 1)
        #expect(budget.queuedBytes(client: bob) == 20)
        #expect(budget.queuedBytes(client: alice) == 0)
    }
}
