import ReactorCore
import Testing

/// A job identity's one-word hash: the tables the authority keeps by job must still tell every
/// job apart, also the ones whose words coincide.
@Suite struct JobIDHashTests {
    @Test func everyJobOfManyActionsIsItsOwnKey() {
        var table: [JobID: Int] = [:]
        for action in UInt64(1)...200 {
            for effect in UInt32(0)..<50 { table[JobID(actionSeq: action, effectIndex: effect)] = Int(action) * 100 + Int(effect) }
        }
        #expect(table.count == 10_000)
        #expect(table[JobID(actionSeq: 137, effectIndex: 42)] == 13_742)
        #expect(table[JobID(actionSeq: 200, effectIndex: 0)] == 20_000)
        #expect(table[JobID(actionSeq: 201, effectIndex: 0)] == nil)
        #expect(table[JobID(actionSeq: 1, effectIndex: 50)] == nil)
    }

    @Test func identitiesWhoseWordsCoincideStayApart() {
        // Action 2^40's first effect and action 0's effect 1 are folded into the same word.
        let high = JobID(actionSeq: 1 << 40, effectIndex: 0)
        let low = JobID(actionSeq: 0, effectIndex: 1)
        #expect(high._rawHashValue(seed: 7) == low._rawHashValue(seed: 7))
        #expect(high != low)
        var table: [JobID: String] = [high: "high", low: "low"]
        #expect(table.count == 2)
        #expect(table[high] == "high")
        #expect(table[low] == "low")
        table[low] = nil
        #expect(table == [high: "high"])
        #expect(Set([high, low, high]).count == 2)
    }

    @Test func equalIdentitiesHashAlike() {
        let job = JobID(actionSeq: 91_000, effectIndex: 3)
        let same = JobID(actionSeq: 91_000, effectIndex: 3)
        #expect(job._rawHashValue(seed: 11) == same._rawHashValue(seed: 11))
        #expect(job.hashValue == same.hashValue)
        #expect(job != JobID(actionSeq: 91_000, effectIndex: 4))
        #expect(job != JobID(actionSeq: 91_001, effectIndex: 3))
    }
}
