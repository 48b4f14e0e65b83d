@testable import ReactorBus
import ReactorCore
import ReactorWire
import Testing

/// How a worker batches a job's last emit with its end (`done_with_emit`), one batch of job
/// events at a time.
@Suite struct ReportBatchTests {
    let job = JobID(actionSeq: 4, effectIndex: 0), other = JobID(actionSeq: 5, effectIndex: 1)

    @Test func aJobThatEmitsOnceAndEndsInTheBatchIsOneDone() {
        var batch = ReportBatch()
        #expect(batch.emit(job, run: 1, emitIndex: 0, payload: [0xa0]) == nil)
        #expect(batch.end(job, outcome: .done(emitCount: 1)).messages == [.doneWithEmit(job: job, emitCount: 1, payload: [0xa0])])
        #expect(batch.isEmpty)
        #expect(batch.close { _, _ in true }.isEmpty)
    }

    @Test func onlyTheLastEmitIsHeldAndEarlierOnesGoAtOnceInOrder() {
        var batch = ReportBatch()
        #expect(batch.emit(job, run: 1, emitIndex: 0, payload: [0]) == nil)
        #expect(batch.emit(job, run: 1, emitIndex: 1, payload: [1]) == .emit(job: job, emitIndex: 0, payload: [0]))
        #expect(batch.emit(job, run: 1, emitIndex: 2, payload: [2]) == .emit(job: job, emitIndex: 1, payload: [1]))
        #expect(batch.end(job, outcome: .done(emitCount: 3)).messages == [.doneWithEmit(job: job, emitCount: 3, payload: [2])])
    }

    @Test func aJobStillRunningAtTheEndOfTheBatchSendsItsEmitThen() {
        var batch = ReportBatch()
        _ = batch.emit(other, run: 2, emitIndex: 0, payload: [9])
        _ = batch.emit(job, run: 1, emitIndex: 0, payload: [8])
        #expect(batch.close { _, _ in true } == [.emit(job: job, emitIndex: 0, payload: [8]), .emit(job: other, emitIndex: 0, payload: [9])])
        #expect(batch.isEmpty)
        // The next batch's end is a plain done: its mutation went already.
        #expect(batch.end(job, outcome: .done(emitCount: 1)).messages == [.done(job: job, emitCount: 1)])
    }

    @Test func anAbandonedRunsHeldEmitIsDropped() {
        var batch = ReportBatch()
        _ = batch.emit(job, run: 1, emitIndex: 0, payload: [8])
        _ = batch.emit(other, run: 7, emitIndex: 0, payload: [9])
        #expect(batch.close { job, run in job == other && run == 7 } == [.emit(job: other, emitIndex: 0, payload: [9])])
        _ = batch.emit(job, run: 2, emitIndex: 0, payload: [8])
        batch.discard()
        #expect(batch.isEmpty)
    }

    @Test func aDoneThatDoesNotCountTheHeldEmitAsItsLastKeepsThemApart() {
        // A runner that reports fewer mutations than it emitted: the authority must see both
        // as sent, so it can fail the job for the gap.
        var batch = ReportBatch()
        _ = batch.emit(job, run: 1, emitIndex: 3, payload: [3])
        #expect(batch.end(job, outcome: .done(emitCount: 2)).messages == [.emit(job: job, emitIndex: 3, payload: [3]), .done(job: job, emitCount: 2)])
    }

    @Test func aFailureSendsTheHeldEmitFirst() {
        var batch = ReportBatch()
        _ = batch.emit(job, run: 1, emitIndex: 0, payload: [1])
        let failure = EffectFailure(message: "gave up", attempts: 3)
        #expect(batch.end(job, outcome: .failed(failure)).messages == [.emit(job: job, emitIndex: 0, payload: [1]), .failed(job: job, failure: failure)])
        #expect(batch.end(other, outcome: .done(emitCount: 0)).messages == [.done(job: other, emitCount: 0)])
    }
}
