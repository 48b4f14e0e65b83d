import Testing
@testable import ReactorCore

/// The accept witness a runtime not specialised for the reactor uses: the same acceptance as
/// `accept`, its applied mutations appended to the runtime's array (only when it collects
/// them), a summary of the rest, and the whole acceptance handed over only when the action
/// issued, cancelled or finished jobs.
@Suite struct AcceptanceSummaryTests {
    private typealias Kept = Acceptance<CancelReactor.Mutation, CancelReactor.Effect>

    /// Accepts `action` on both sequencers, through `accept` and through the witness; checks
    /// that they agree on the state and the summary on the acceptance.
    private func accept(_ action: CancelReactor.Action, plain: inout Sequencer<CancelReactor>, witnessed: inout Sequencer<CancelReactor>,
                        collecting: Bool, applied: inout [AppliedMutation<CancelReactor.Mutation>], kept: inout Kept?) -> (Acceptance<CancelReactor.Mutation, CancelReactor.Effect>, AcceptanceSummary) {
        let expected = plain.accept(action)
        let summary = CancelReactor._sequencerAccept(action, in: &witnessed, collecting: collecting, into: &applied, keeping: &kept)
        #expect(witnessed.state == plain.state && witnessed.version == plain.version && witnessed.openJobCount == plain.openJobCount)
        #expect(summary.actionSeq == expected.actionSeq && summary.version == expected.version)
        #expect(summary.appliedCount == expected.applied.count && summary.jobCount == expected.jobs.count)
        return (expected, summary)
    }

    @Test(arguments: [true, false])
    func aPlainActionHandsOverNothingButItsMutations(collecting: Bool) {
        var plain = Sequencer(reactor: CancelReactor()), witnessed = Sequencer(reactor: CancelReactor())
        var applied: [AppliedMutation<CancelReactor.Mutation>] = []
        var kept: Kept?
        let (_, summary) = accept(.act(sync: ["a", "b"]), plain: &plain, witnessed: &witnessed, collecting: collecting, applied: &applied, kept: &kept)
        #expect(summary == AcceptanceSummary(actionSeq: 1, version: 2, appliedCount: 2, jobCount: 0, isPlain: true, keptAcceptance: false))
        #expect(kept == nil)
        #expect(applied.map(\.mutation) == (collecting ? [.log("a"), .log("b")] : []))
        #expect(applied.map(\.version) == (collecting ? [1, 2] : []))
    }

    @Test func anActionWithJobsOrCancellationsHandsOverItsWholeAcceptance() {
        var plain = Sequencer(reactor: CancelReactor()), witnessed = Sequencer(reactor: CancelReactor())
        var applied: [AppliedMutation<CancelReactor.Mutation>] = []
        var kept: Kept?
        // Jobs: handed over, with the jobs `accept` issued.
        let (issued, withJobs) = accept(.act(sync: ["s"], effects: [.init("e", id: "x")]), plain: &plain, witnessed: &witnessed,
                                        collecting: true, applied: &applied, kept: &kept)
        #expect(withJobs == AcceptanceSummary(actionSeq: 1, version: 1, appliedCount: 1, jobCount: 1, isPlain: true, keptAcceptance: true))
        #expect(kept?.jobs.map(\.id) == issued.jobs.map(\.id) && kept?.actionSeq == 1)
        // A plain action afterwards leaves what was kept as it was: the runtime takes it first.
        kept = nil
        _ = accept(.act(sync: ["t"]), plain: &plain, witnessed: &witnessed, collecting: true, applied: &applied, kept: &kept)
        #expect(kept == nil)
        // A cancellation: not plain, handed over with what it cancelled and the mutations it applied.
        let (cancelling, summary) = accept(.act(cancel: ["x"]), plain: &plain, witnessed: &witnessed, collecting: true, applied: &applied, kept: &kept)
        #expect(summary.isPlain == false && summary.keptAcceptance && summary.jobCount == 0)
        #expect(kept?.cancelled == cancelling.cancelled && kept?.cancelled == [JobID(actionSeq: 1, effectIndex: 0)])
        #expect(kept?.completedActions == cancelling.completedActions)
        #expect(applied.map(\.mutation) == [.log("s"), .log("t"), .log("cancelled e")])
    }
}
