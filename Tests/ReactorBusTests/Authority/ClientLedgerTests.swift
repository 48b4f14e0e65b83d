import Testing
@testable import ReactorBus

@Suite struct ClientLedgerTests {
    @Test func aResentActionGetsItsOriginalAck() {
        var ledger = ClientLedger()
        #expect(ledger.verdict(client: "c", seq: 1) == .new)
        ledger.record(client: "c", seq: 1, ack: .init(actionSeq: 7, version: 9))
        #expect(ledger.verdict(client: "c", seq: 1) == .duplicate(.init(actionSeq: 7, version: 9)))
        #expect(ledger.verdict(client: "other", seq: 1) == .new)
        #expect(ledger.verdict(client: "c", seq: 2) == .new)
    }

    @Test func aSkippedSequenceNumberWithinTheWindowIsStillNew() {
        var ledger = ClientLedger(window: 10)
        ledger.record(client: "c", seq: 5, ack: .init(actionSeq: 1, version: 1))
        #expect(ledger.verdict(client: "c", seq: 3) == .new)
    }

    @Test func resendsOlderThanTheWindowAreStaleAndMemoryStaysBounded() {
        var ledger = ClientLedger(window: 100)
        for seq in 1...10_000 as ClosedRange<UInt64> {
            ledger.record(client: "c", seq: seq, ack: .init(actionSeq: seq, version: seq))
        }
        #expect(ledger.verdict(client: "c", seq: 9_950) == .duplicate(.init(actionSeq: 9_950, version: 9_950)))
        #expect(ledger.verdict(client: "c", seq: 9_900) == .stale)
        #expect(ledger.verdict(client: "c", seq: 1) == .stale)
        #expect(ledger.verdict(client: "c", seq: 10_001) == .new)
    }

    @Test func theLeastRecentlySeenClientIsForgottenFirst() {
        var ledger = ClientLedger(window: 10, maxClients: 2)
        ledger.record(client: "a", seq: 1, ack: .init(actionSeq: 1, version: 1))
        ledger.record(client: "b", seq: 1, ack: .init(actionSeq: 2, version: 2))
        ledger.record(client: "a", seq: 2, ack: .init(actionSeq: 3, version: 3))
        ledger.record(client: "c", seq: 1, ack: .init(actionSeq: 4, version: 4))
        #expect(ledger.clientCount == 2)
        #expect(ledger.verdict(client: "b", seq: 1) == .new)
        #expect(ledger.verdict(client: "a", seq: 2) == .duplicate(.init(actionSeq: 3, version: 3)))
    }
}
