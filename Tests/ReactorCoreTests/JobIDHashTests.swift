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

    /// The tables use the hash's low bits as the bucket. Identities that differ only in their
    /// high bits (the effects of one action are folded in above bit 40) must still spread over
    /// the buckets, as must consecutive actions, and another table seed must move them.
    @Test func identitiesSpreadOverTheLowBits() {
        let effects = (UInt32(0)..<1_024).map { JobID(actionSeq: 77, effectIndex: $0) }
        let actions = (UInt64(1)...1_024).map { JobID(actionSeq: $0, effectIndex: 0) }
        for jobs in [effects, actions] {
            let buckets = Set(jobs.map { $0._rawHashValue(seed: 5) & 1_023 })
            // Random keys fill about 63% of the buckets; a hash that drops the high bits, 1.
            #expect(buckets.count >= 560)
            let moved = jobs.count { $0._rawHashValue(seed: 5) != $0._rawHashValue(seed: 6) }
            #expect(moved == jobs.count)
        }
    }
}
