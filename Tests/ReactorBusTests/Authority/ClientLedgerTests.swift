import MessagePack
import Testing
@testable import ReactorBus

@Suite struct ClientLedgerTests {
    let a: [UInt8] = [0xa1, 0x61]
    let b: [UInt8] = [0xa1, 0x62]

    func ack(_ n: UInt64) -> ClientLedger.Ack { .init(actionSeq: n, version: n * 10) }

    @Test func aResentActionGetsItsOriginalAck() {
        var ledger = ClientLedger()
        #expect(ledger.verdict(client: "c", seq: 1, payload: a) == .new)
        ledger.record(client: "c", seq: 1, payload: a, ack: ack(7))
        #expect(ledger.verdict(client: "c", seq: 1, payload: a) == .duplicate(ack(7)))
        #expect(ledger.verdict(client: "other", seq: 1, payload: a) == .new)
        #expect(ledger.verdict(client: "c", seq: 2, payload: a) == .new)
    }

    @Test func theClientFoundLastIsAnsweredRightWhileOthersComeAndGo() {
        // The ledger remembers where it found the last client; every client added (the table
        // grows and moves its entries) or forgotten must make it look again.
        var ledger = ClientLedger(limits: ClientLedgerLimits(maxClients: 300))
        for seq in 1...3 as ClosedRange<UInt64> { ledger.record(client: "c", seq: seq, payload: a, ack: ack(seq)) }
        for index in 1...250 {
            let last = 2 + UInt64(index)
            #expect(ledger.verdict(client: "c", seq: last, payload: a) == .duplicate(ack(last)))
            ledger.record(client: "n-\(index)", seq: 1, payload: b, ack: ack(1_000 + UInt64(index)))
            #expect(ledger.verdict(client: "c", seq: last, payload: b) == .conflict(ack(last)))
            // A copy shares the tables (as a snapshot does): the record below copies them first.
            let copy = ledger
            ledger.record(client: "c", seq: last + 1, payload: a, ack: ack(last + 1))
            #expect(ledger.verdict(client: "c", seq: last + 1, payload: a) == .duplicate(ack(last + 1)))
            var earlier = copy
            #expect(earlier.verdict(client: "c", seq: last + 1, payload: a) == .new)
            #expect(ledger.verdict(client: "n-\(index)", seq: 1, payload: b) == .duplicate(ack(1_000 + UInt64(index))))
        }
        #expect(ledger.verdict(client: "c", seq: 253, payload: a) == .duplicate(ack(253)))
        #expect(ledger.clients["c"]?.accepted.highest == 253)
        // Found last, then forgotten with the least recently seen: unknown, not found where it was.
        #expect(ledger.verdict(client: "n-1", seq: 1, payload: b) == .duplicate(ack(1_001)))
        for index in 251...400 { ledger.record(client: "n-\(index)", seq: 1, payload: b, ack: ack(1_000 + UInt64(index))) }
        #expect(ledger.clients["n-1"] == nil)
        #expect(ledger.verdict(client: "n-1", seq: 1, payload: b) == .unknownClient(highestSeq: 1))
        #expect(ledger.verdict(client: "n-400", seq: 1, payload: b) == .duplicate(ack(1_400)))
    }

    @Test func aResendWithAnotherPayloadIsAConflict() {
        var ledger = ClientLedger()
        ledger.record(client: "c", seq: 1, payload: a, ack: ack(1))
        #expect(ledger.verdict(client: "c", seq: 1, payload: b) == .conflict(ack(1)))
    }

    @Test func aSkippedSequenceNumberIsStillNewAndFillsTheGap() {
        var ledger = ClientLedger()
        ledger.record(client: "c", seq: 5, payload: a, ack: ack(1))
        #expect(ledger.verdict(client: "c", seq: 3, payload: a) == .new)
        ledger.record(client: "c", seq: 3, payload: a, ack: ack(2))
        #expect(ledger.verdict(client: "c", seq: 3, payload: a) == .duplicate(ack(2)))
        #expect(ledger.verdict(client: "c", seq: 4, payload: a) == .new)
        #expect(ledger.verdict(client: "c", seq: 6, payload: a) == .new)
    }

    @Test func everyAcceptedNumberStaysKnownBeyondTheRememberedAcks() {
        var ledger = ClientLedger(limits: ClientLedgerLimits(rememberedAcks: 4))
        for seq in 1...10_000 as ClosedRange<UInt64> {
            ledger.record(client: "c", seq: seq, payload: a, ack: ack(seq))
        }
        #expect(ledger.verdict(client: "c", seq: 10_000, payload: a) == .duplicate(ack(10_000)))
        #expect(ledger.verdict(client: "c", seq: 9_997, payload: a) == .duplicate(ack(9_997)))
        #expect(ledger.verdict(client: "c", seq: 9_996, payload: a) == .appliedEarlier)
        #expect(ledger.verdict(client: "c", seq: 1, payload: b) == .appliedEarlier)
        #expect(ledger.verdict(client: "c", seq: 10_001, payload: a) == .new)
        // One range and four acks, however many actions.
        #expect(ledger.clients["c"]?.accepted.spans.count == 1)
        #expect(ledger.clients["c"]?.recent.entries.count == 4)
    }

    @Test func theRecentAcksRingFindsExactlyItsNewestEntriesAtEveryFill() throws {
        // Every fill level and every position of the ring's next slot, out of order too (the
        // highest number evicted while lower ones stay), and after a snapshot round trip: the
        // newest `capacity` entries are found with their own ack, older ones are not.
        for capacity in 1...5 {
            var ring = RecentAcks()
            var appended: [UInt64] = []
            for step in 0..<(capacity * 3) {
                let seq = UInt64(step % 2 == 0 ? 100 + step : 200 - step)
                ring.append(.init(seq: seq, actionSeq: seq * 2, version: seq * 3, fingerprint: seq), capacity: capacity)
                appended.append(seq)
                let kept = Set(appended.suffix(capacity))
                let restored = try MessagePackDecoder().decode(RecentAcks.self, from: try MessagePackEncoder().encode(ring))
                #expect(restored == ring)
                for seq in appended {
                    #expect(ring.entry(for: seq)?.actionSeq == (kept.contains(seq) ? seq * 2 : nil), "capacity \(capacity), step \(step), seq \(seq)")
                    #expect(restored.entry(for: seq)?.actionSeq == (kept.contains(seq) ? seq * 2 : nil), "restored: capacity \(capacity), step \(step), seq \(seq)")
                }
                #expect(ring.entry(for: 1) == nil && ring.entry(for: 1_000) == nil)
            }
        }
    }

    @Test func tooManyGapsForgetTheOldestRangeAndItsResendsAreStale() {
        var ledger = ClientLedger(limits: ClientLedgerLimits(rememberedAcks: 1, maxGapsPerClient: 2))
        for seq in [1, 3, 5, 7] as [UInt64] { ledger.record(client: "c", seq: seq, payload: a, ack: ack(seq)) }
        // Ranges 3, 5, 7 remain (two gaps); the range 1 is forgotten, 2 was never accepted.
        #expect(ledger.verdict(client: "c", seq: 1, payload: a) == .stale)
        #expect(ledger.verdict(client: "c", seq: 2, payload: a) == .new)
        #expect(ledger.verdict(client: "c", seq: 4, payload: a) == .new)
        #expect(ledger.verdict(client: "c", seq: 3, payload: a) == .appliedEarlier)
        #expect(ledger.verdict(client: "c", seq: 7, payload: a) == .duplicate(ack(7)))
    }

    @Test func aForgottenClientsResendIsRefusedNotAppliedAgain() {
        var ledger = ClientLedger(limits: ClientLedgerLimits(maxClients: 100))
        for seq in 1...3 as ClosedRange<UInt64> { ledger.record(client: "old", seq: seq, payload: a, ack: ack(seq)) }
        for index in 1...200 { ledger.record(client: "other-\(index)", seq: 1, payload: a, ack: ack(100 + UInt64(index))) }
        #expect(ledger.clientCount <= 100)
        #expect(ledger.clients["old"] == nil)
        #expect(ledger.verdict(client: "old", seq: 1, payload: a) == .unknownClient(highestSeq: 3))
        #expect(ledger.verdict(client: "old", seq: 3, payload: a) == .unknownClient(highestSeq: 3))
        // New work above its past is accepted, and its past stays unknown, never "new".
        #expect(ledger.verdict(client: "old", seq: 4, payload: a) == .new)
        ledger.record(client: "old", seq: 4, payload: a, ack: ack(999))
        #expect(ledger.verdict(client: "old", seq: 2, payload: a) == .stale)
        #expect(ledger.verdict(client: "old", seq: 4, payload: a) == .duplicate(ack(999)))
    }

    @Test func theLeastRecentlySeenClientsAreForgottenFirst() {
        var ledger = ClientLedger(limits: ClientLedgerLimits(maxClients: 2))
        ledger.record(client: "a", seq: 1, payload: a, ack: ack(1))
        ledger.record(client: "b", seq: 1, payload: a, ack: ack(2))
        ledger.record(client: "a", seq: 2, payload: a, ack: ack(3))
        ledger.record(client: "c", seq: 1, payload: a, ack: ack(4))
        #expect(ledger.clientCount == 2)
        #expect(ledger.verdict(client: "b", seq: 1, payload: a) == .unknownClient(highestSeq: 1))
        #expect(ledger.verdict(client: "a", seq: 2, payload: a) == .duplicate(ack(3)))
        #expect(ledger.forgottenCount == 1)
    }

    @Test func tombstonesAreBoundedOldestFirst() {
        var ledger = ClientLedger(limits: ClientLedgerLimits(maxClients: 1, maxForgottenClients: 2))
        for index in 1...4 { ledger.record(client: "c\(index)", seq: 1, payload: a, ack: ack(UInt64(index))) }
        #expect(ledger.forgottenCount == 2)
        #expect(ledger.verdict(client: "c1", seq: 1, payload: a) == .new)
        #expect(ledger.verdict(client: "c2", seq: 1, payload: a) == .unknownClient(highestSeq: 1))
        #expect(ledger.verdict(client: "c3", seq: 1, payload: a) == .unknownClient(highestSeq: 1))
    }

    @Test func aSnapshotRoundTripKeepsEveryVerdict() throws {
        var ledger = ClientLedger(limits: ClientLedgerLimits(rememberedAcks: 3, maxClients: 2))
        ledger.record(client: "y", seq: 1, payload: a, ack: ack(20))
        for seq in [1, 2, 3, 5, 6] as [UInt64] { ledger.record(client: "x", seq: seq, payload: a, ack: ack(seq)) }
        ledger.record(client: "z", seq: 1, payload: a, ack: ack(21))
        var restored = try MessagePackDecoder().decode(ClientLedger.self, from: try MessagePackEncoder().encode(ledger))
        restored.apply(ledger.limits)
        #expect(restored == ledger)
        for seq in 1...7 as ClosedRange<UInt64> {
            #expect(restored.verdict(client: "x", seq: seq, payload: b) == ledger.verdict(client: "x", seq: seq, payload: b))
        }
        #expect(restored.verdict(client: "y", seq: 1, payload: a) == .unknownClient(highestSeq: 1))
    }

    /// The encoding written before the ledger became compact.
    struct LegacyLedger: Encodable {
        struct Client: Encodable {
            var highest: UInt64
            var acks: [UInt64: ClientLedger.Ack]
            var lastSeen: UInt64
        }
        var window: UInt64
        var maxClients: Int
        var clients: [String: Client]
        var clock: UInt64
    }

    @Test func aSnapshotFromTheEarlierFormatKeepsItsDedupState() throws {
        var acks: [UInt64: ClientLedger.Ack] = [:]
        for seq in 1...150 as ClosedRange<UInt64> where seq != 120 { acks[seq] = ack(seq) }
        let legacy = LegacyLedger(window: 100, maxClients: 4_096, clients: ["c": .init(highest: 150, acks: acks, lastSeen: 9)], clock: 9)
        var ledger = try MessagePackDecoder().decode(ClientLedger.self, from: try MessagePackEncoder().encode(legacy))
        ledger.apply(ClientLedgerLimits())
        #expect(ledger.verdict(client: "c", seq: 150, payload: b) == .duplicate(ack(150)))
        #expect(ledger.verdict(client: "c", seq: 100, payload: b) == .appliedEarlier)
        #expect(ledger.verdict(client: "c", seq: 120, payload: b) == .new)
        #expect(ledger.verdict(client: "c", seq: 50, payload: b) == .stale)
        #expect(ledger.verdict(client: "c", seq: 151, payload: b) == .new)
    }

    @Test func aLedgerFromANewerFormatIsRefusedWithAdvice() throws {
        struct Future: Encodable { var format: UInt64 = 3; var clock: UInt64 = 0 }
        #expect {
            _ = try MessagePackDecoder().decode(ClientLedger.self, from: try MessagePackEncoder().encode(Future()))
        } throws: { error in
            "\(error)".contains("upgrade the authority")
        }
    }

    @Test func acceptedSequencesMergeGapsExactly() {
        var set = AcceptedSequences()
        for seq in [5, 1, 3, 2, 9, 4, 8] as [UInt64] { set.insert(seq) }
        #expect(set.spans == [.init(lower: 1, upper: 5), .init(lower: 8, upper: 9)])
        #expect(set.contains(4) && !set.contains(6) && !set.contains(7) && set.contains(8) && !set.contains(10))
        set.insert(7); set.insert(6)
        #expect(set.spans == [.init(lower: 1, upper: 9)])
    }
}

@Suite struct ClientLedgerSizeTests {
    /// The case that made snapshots 37 MB: 4,096 clients that sent 4,096 actions each. The
    /// compact ledger's size does not depend on how many actions a client sent (one range and
    /// the last few acks), so 64 each stand for 4,096 here and keep the test quick.
    @Test func fourThousandBusyClientsTakeUnderAMegabyteInASnapshot() throws {
        var ledger = ClientLedger()
        var actionSeq: UInt64 = 0
        for seq in 1...64 as ClosedRange<UInt64> {
            for client in 0..<4_096 {
                actionSeq += 1
                ledger.record(client: "client-\(client)", seq: seq, payload: [0x81, 0xa7], ack: .init(actionSeq: actionSeq, version: actionSeq))
            }
        }
        let bytes = try MessagePackEncoder().encode(ledger).count
        #expect(ledger.clientCount == 4_096)
        #expect(bytes < 1 << 20, "\(bytes) bytes")
        #expect(ledger.verdict(client: "client-7", seq: 1, payload: [0x81, 0xa7]) == .appliedEarlier)
    }
}
