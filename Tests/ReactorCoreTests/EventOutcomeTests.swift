import Testing
@testable import ReactorCore

/// The witnesses a runtime not specialised for the reactor uses for async events: the same
/// progress as `apply`/`complete`, with the applied mutations appended to the runtime's array
/// (only when it collects them) and counted by origin.
@Suite struct EventOutcomeTests {
    private func job(_ seq: UInt64) -> JobID { JobID(actionSeq: seq, effectIndex: 0) }

    @Test(arguments: [true, false])
    func aLaneReleasingHeldEmitsAppendsThemInOrderWhenCollecting(collecting: Bool) throws {
        var sequencer = Sequencer(reactor: CancelReactor())
        _ = sequencer.accept(.act(effects: [.init("a", lane: "L")]))
        _ = sequencer.accept(.act(effects: [.init("b", lane: "L")]))
        var applied: [AppliedMutation<CancelReactor.Mutation>] = []
        // b's emits wait for a: nothing applied, nothing appended.
        for index in UInt32(0)..<2 {
            let held = try CancelReactor._sequencerApply(job: job(2), emitIndex: index, mutation: .log("b\(index)"), in: &sequencer,
                                                         collecting: collecting, into: &applied)
            #expect(held == EventOutcome(disposition: .buffered, applied: OriginCounts(), finished: [], completedActions: []))
        }
        let done = try CancelReactor._sequencerComplete(job: job(2), emitCount: 2, in: &sequencer, collecting: collecting, into: &applied)
        #expect(done.disposition == .buffered)
        #expect(applied.isEmpty)
        let own = try CancelReactor._sequencerApply(job: job(1), emitIndex: 0, mutation: .log("a0"), in: &sequencer,
                                                    collecting: collecting, into: &applied)
        #expect(own.applied == OriginCounts(async: 1))
        // a's end lets b through: its two held emits, then b ends too.
        let end = try CancelReactor._sequencerComplete(job: job(1), emitCount: 1, in: &sequencer, collecting: collecting, into: &applied)
        #expect(end == EventOutcome(disposition: .applied, applied: OriginCounts(async: 2), finished: [job(1), job(2)], completedActions: [1, 2]))
        #expect(applied.map(\.mutation) == (collecting ? [.log("a0"), .log("b0"), .log("b1")] : []))
        #expect(applied.map(\.version) == (collecting ? [1, 2, 3] : []))
        #expect(sequencer.state.log == ["a0", "b0", "b1"])
        #expect(try CancelReactor._sequencerComplete(job: job(1), emitCount: 1, in: &sequencer, collecting: collecting, into: &applied).disposition == .duplicate)
    }

    @Test func aProgressIsCountedByOrigin() {
        let progress = Progress<CancelReactor.Mutation>(.applied, applied: [
            AppliedMutation(version: 1, actionSeq: 1, origin: .sync(index: 0), mutation: .log("s")),
            AppliedMutation(version: 2, actionSeq: 1, origin: .cancelled(job: job(1), index: 0), mutation: .log("c")),
            AppliedMutation(version: 3, actionSeq: 2, origin: .failure(job: job(2), index: 0), mutation: .log("f")),
            AppliedMutation(version: 4, actionSeq: 2, origin: .failure(job: job(2), index: 1), mutation: .log("g")),
        ], finished: [job(2)])
        var collected: [AppliedMutation<CancelReactor.Mutation>] = []
        let outcome = EventOutcome(progress, collecting: true, into: &collected)
        #expect(outcome.applied == OriginCounts(sync: 1, async: 0, failure: 2, cancelled: 1))
        #expect(outcome.applied.total == 4)
        #expect(outcome.finished == [job(2)])
        #expect(collected.map(\.version) == [1, 2, 3, 4])
    }
}
