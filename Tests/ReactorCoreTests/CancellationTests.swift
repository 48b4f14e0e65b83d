import Foundation
import Testing
@testable import ReactorCore

/// A reactor whose effects say themselves whether they can be cancelled, under which id, whether
/// they cancel in flight and in which lane they run; every mutation is a line in a log.
struct CancelReactor: Reactor {
    struct Effect: Codable, Sendable, Equatable {
        var name: String
        var id: String?
        var inFlight = false
        var lane: String?

        init(_ name: String, id: String? = nil, inFlight: Bool = false, lane: String? = nil) {
            self.name = name
            self.id = id
            self.inFlight = inFlight
            self.lane = lane
        }
    }

    enum Action: Codable, Sendable {
        case act(sync: [String] = [], effects: [Effect] = [], cancel: [String] = [])
    }

    enum Mutation: Codable, Sendable, Equatable {
        case log(String)
    }

    struct State: Codable, Sendable, Equatable {
        var log: [String] = []
    }

    var initialState: State { State() }

    func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .act(let sync, let effects, let cancel):
            Mutations(sync: sync.map(Mutation.log), async: effects, cancel: cancel.map { CancelID($0) })
        }
    }

    func reduce(state: inout State, mutation: Mutation) {
        switch mutation { case .log(let line): state.log.append(line) }
    }

    func lane(for effect: Effect) -> String? { effect.lane }
    func cancelID(for effect: Effect) -> CancelID? { effect.id.map { CancelID($0) } }
    func cancelsInFlight(_ effect: Effect) -> Bool { effect.inFlight }
    func cancelled(effect: Effect) -> [Mutation] { [.log("cancelled \(effect.name)")] }
}

@Suite struct CancellationTests {
    var sequencer = Sequencer(reactor: CancelReactor())

    private func job(_ seq: UInt64, _ index: UInt32 = 0) -> JobID { JobID(actionSeq: seq, effectIndex: index) }

    /// Every later event of a cancelled job is dropped as a duplicate and changes nothing.
    private mutating func expectEverythingLateDropped(_ id: JobID, emitIndices: [UInt32]) throws {
        let version = sequencer.version
        let state = sequencer.state
        for index in emitIndices {
            #expect(try sequencer.apply(job: id, emitIndex: index, mutation: .log("late \(index)")).disposition == .duplicate)
        }
        #expect(try sequencer.complete(job: id, emitCount: UInt32(emitIndices.count)).disposition == .duplicate)
        #expect(try sequencer.fail(job: id, error: EffectFailure(message: "late", attempts: 1)).disposition == .duplicate)
        #expect(sequencer.version == version)
        #expect(sequencer.state == state)
    }

    @Test mutating func cancelBeforeStartEndsTheJobAndAppliesTheCancelMutations() throws {
        let started = sequencer.accept(.act(effects: [.init("e1", id: "s")]))
        #expect(started.jobs.map(\.id) == [job(1)])
        let cancelling = sequencer.accept(.act(sync: ["stop"], cancel: ["s"]))
        #expect(cancelling.actionSeq == 2)
        #expect(cancelling.cancelled == [job(1)])
        #expect(cancelling.finished == [])
        #expect(cancelling.jobs == [])
        #expect(cancelling.applied.map(\.mutation) == [.log("stop"), .log("cancelled e1")])
        #expect(cancelling.applied.map(\.version) == [1, 2])
        #expect(cancelling.applied.map(\.actionSeq) == [2, 1])
        #expect(cancelling.applied.map(\.origin) == [.sync(index: 0), .cancelled(job: job(1), index: 0)])
        // The plain counts a runtime reads follow the arrays the cancellation changed.
        #expect((started.appliedCount, started.jobCount) == (0, 1))
        #expect((cancelling.appliedCount, cancelling.jobCount) == (2, 0))
        #expect(cancelling.version == 2)
        #expect(sequencer.openJobCount == 0)
        #expect(!sequencer.hasOpenJobs(actionSeq: 1))
        #expect(sequencer.unreportedJobs.isEmpty)
        try expectEverythingLateDropped(job(1), emitIndices: [0, 1])
        #expect(sequencer.state.log == ["stop", "cancelled e1"])
    }

    @Test mutating func cancelDuringRunKeepsAppliedEmitsAndDropsBufferedAndLaterOnes() throws {
        _ = sequencer.accept(.act(effects: [.init("e1", id: "s")]))
        #expect(try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("e1:0")).disposition == .applied)
        #expect(try sequencer.apply(job: job(1), emitIndex: 2, mutation: .log("e1:2")).disposition == .buffered)
        #expect(try sequencer.complete(job: job(1), emitCount: 3).disposition == .buffered)
        let cancelling = sequencer.accept(.act(cancel: ["s"]))
        #expect(cancelling.cancelled == [job(1)])
        #expect(cancelling.applied.map(\.mutation) == [.log("cancelled e1")])
        #expect(cancelling.applied.map(\.version) == [2])
        // The gap fills only now: too late, the buffered emit 2 and the held DONE went with the job.
        try expectEverythingLateDropped(job(1), emitIndices: [1, 2, 3])
        #expect(sequencer.state.log == ["e1:0", "cancelled e1"])
        #expect(sequencer.version == 2)
    }

    @Test mutating func cancellingAJobThatEndedDoesNothing() throws {
        _ = sequencer.accept(.act(effects: [.init("e1", id: "s")]))
        _ = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("e1:0"))
        #expect(try sequencer.complete(job: job(1), emitCount: 1).finished == [job(1)])
        let cancelling = sequencer.accept(.act(cancel: ["s"]))
        #expect(cancelling.cancelled == [])
        #expect(cancelling.applied == [])
        #expect(cancelling.version == 1)
        #expect(sequencer.state.log == ["e1:0"])
        // A failed job has ended too.
        _ = sequencer.accept(.act(effects: [.init("e3", id: "s")]))
        _ = try sequencer.fail(job: job(3), error: EffectFailure(message: "no", attempts: 1))
        #expect(sequencer.accept(.act(cancel: ["s"])).cancelled == [])
        #expect(sequencer.state.log == ["e1:0"])
    }

    @Test mutating func onlyTheNamedIdsAreCancelledAndNotTheActionsOwnNewEffects() throws {
        _ = sequencer.accept(.act(effects: [.init("a", id: "s"), .init("b", id: "t"), .init("c")]))
        let cancelling = sequencer.accept(.act(effects: [.init("d", id: "s")], cancel: ["s"]))
        #expect(cancelling.cancelled == [job(1, 0)])
        #expect(cancelling.jobs.map(\.id) == [job(2)])
        #expect((cancelling.appliedCount, cancelling.jobCount) == (1, 1))
        #expect(sequencer.openJobCount == 3)
        #expect(sequencer.unreportedJobs.map(\.id) == [job(1, 1), job(1, 2), job(2)])
        // An id nothing carries cancels nothing.
        #expect(sequencer.accept(.act(cancel: ["nothing"])).cancelled == [])
        // Several ids at once, in job order whatever the order of the ids.
        #expect(sequencer.accept(.act(cancel: ["s", "t"])).cancelled == [job(1, 1), job(2)])
        #expect(sequencer.state.log == ["cancelled a", "cancelled b", "cancelled d"])
    }

    @Test mutating func cancelInFlightDropsTheOldJobsLateEmitsArrivingAfterTheNewJobs() throws {
        _ = sequencer.accept(.act(effects: [.init("old", id: "s", inFlight: true)]))
        _ = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("old:0"))
        let second = sequencer.accept(.act(sync: ["typed"], effects: [.init("new", id: "s", inFlight: true)]))
        #expect(second.cancelled == [job(1)])
        #expect(second.jobs.map(\.id) == [job(2)])
        #expect(second.applied.map(\.origin) == [.sync(index: 0), .cancelled(job: job(1), index: 0)])
        // The new job's results arrive first, then the old job's late ones: only the new apply.
        #expect(try sequencer.apply(job: job(2), emitIndex: 0, mutation: .log("new:0")).disposition == .applied)
        #expect(try sequencer.complete(job: job(2), emitCount: 1).finished == [job(2)])
        try expectEverythingLateDropped(job(1), emitIndices: [0, 1])
        #expect(sequencer.state.log == ["old:0", "typed", "cancelled old", "new:0"])
        #expect(sequencer.version == 4)
        #expect(sequencer.openJobCount == 0)
    }

    @Test mutating func cancelInFlightCancelsOnlyTheSameIdAndOnlyWhenAsked() throws {
        _ = sequencer.accept(.act(effects: [.init("a", id: "s"), .init("b", id: "t"), .init("c")]))
        // Same id without cancelInFlight: both run.
        #expect(sequencer.accept(.act(effects: [.init("d", id: "s")])).cancelled == [])
        // cancelInFlight cancels every open job with its id, older ones first.
        let third = sequencer.accept(.act(effects: [.init("e", id: "s", inFlight: true)]))
        #expect(third.cancelled == [job(1, 0), job(2)])
        #expect(sequencer.unreportedJobs.map(\.id) == [job(1, 1), job(1, 2), job(3)])
        // cancelInFlight without an id cancels nothing.
        #expect(sequencer.accept(.act(effects: [.init("f", inFlight: true)])).cancelled == [])
    }

    @Test mutating func cancelInFlightWithinOneActionKeepsOnlyTheLastEffect() {
        let acceptance = sequencer.accept(.act(effects: [
            .init("a", id: "s", inFlight: true), .init("b", id: "s", inFlight: true), .init("c", id: "s", inFlight: true),
        ]))
        #expect(acceptance.cancelled == [job(1, 0), job(1, 1)])
        #expect(acceptance.jobs.map(\.id) == [job(1, 2)])
        #expect(acceptance.applied.map(\.mutation) == [.log("cancelled a"), .log("cancelled b")])
        // Issued three jobs, kept one: the count follows the jobs removed after the init.
        #expect((acceptance.appliedCount, acceptance.jobCount) == (2, 1))
        #expect(sequencer.openJobCount == 1)
        #expect(sequencer.hasOpenJobs(actionSeq: 1))
    }

    @Test mutating func cancellingTheFirstJobOfALaneReleasesTheWaitingResultsOfTheNext() throws {
        _ = sequencer.accept(.act(effects: [.init("first", id: "s", lane: "L")]))
        _ = sequencer.accept(.act(effects: [.init("second", lane: "L")]))
        _ = sequencer.accept(.act(effects: [.init("third", lane: "L")]))
        #expect(try sequencer.apply(job: job(2), emitIndex: 0, mutation: .log("second:0")).disposition == .buffered)
        #expect(try sequencer.apply(job: job(2), emitIndex: 1, mutation: .log("second:1")).disposition == .buffered)
        #expect(try sequencer.complete(job: job(2), emitCount: 2).disposition == .buffered)
        #expect(try sequencer.apply(job: job(3), emitIndex: 0, mutation: .log("third:0")).disposition == .buffered)
        let cancelling = sequencer.accept(.act(sync: ["stop"], cancel: ["s"]))
        #expect(cancelling.cancelled == [job(1)])
        #expect(cancelling.finished == [job(2)])
        #expect(cancelling.applied.map(\.mutation) == [.log("stop"), .log("cancelled first"), .log("second:0"), .log("second:1"), .log("third:0")])
        #expect(cancelling.applied.map(\.version) == [1, 2, 3, 4, 5])
        #expect(cancelling.applied.map(\.origin) == [
            .sync(index: 0), .cancelled(job: job(1), index: 0),
            .async(job: job(2), emitIndex: 0), .async(job: job(2), emitIndex: 1), .async(job: job(3), emitIndex: 0),
        ])
        #expect(cancelling.version == 5)
        // The third job is first in the lane now: its results apply at once.
        #expect(try sequencer.complete(job: job(3), emitCount: 1).finished == [job(3)])
        try expectEverythingLateDropped(job(1), emitIndices: [0])
        #expect(sequencer.openJobCount == 0)
    }

    @Test mutating func cancellingAJobBehindTheFirstOfItsLaneLeavesTheLaneInOrder() throws {
        _ = sequencer.accept(.act(effects: [.init("first", lane: "L")]))
        _ = sequencer.accept(.act(effects: [.init("second", id: "s", lane: "L")]))
        _ = sequencer.accept(.act(effects: [.init("third", lane: "L")]))
        _ = try sequencer.apply(job: job(2), emitIndex: 0, mutation: .log("second:0"))
        _ = try sequencer.apply(job: job(3), emitIndex: 0, mutation: .log("third:0"))
        _ = try sequencer.complete(job: job(3), emitCount: 1)
        let cancelling = sequencer.accept(.act(cancel: ["s"]))
        #expect(cancelling.cancelled == [job(2)])
        #expect(cancelling.finished == [])
        #expect(cancelling.applied.map(\.mutation) == [.log("cancelled second")])
        // The third still waits for the first; once it ends, the third follows.
        _ = try sequencer.apply(job: job(1), emitIndex: 0, mutation: .log("first:0"))
        let done = try sequencer.complete(job: job(1), emitCount: 1)
        #expect(done.finished == [job(1), job(3)])
        #expect(sequencer.state.log == ["cancelled second", "first:0", "third:0"])
    }

    @Test mutating func aCheckpointTakenAfterACancelDoesNotHoldTheJob() throws {
        _ = sequencer.accept(.act(effects: [.init("a", id: "s"), .init("b", id: "s")]))
        _ = try sequencer.apply(job: job(1, 0), emitIndex: 0, mutation: .log("a:0"))
        let bytes = try JSONEncoder().encode(sequencer.checkpoint())
        var restored = Sequencer(reactor: CancelReactor(), restoring: try JSONDecoder().decode(SequencerCheckpoint<CancelReactor>.self, from: bytes))
        // A restored sequencer cancels by the effects it holds, exactly as the original.
        let original = sequencer.accept(.act(cancel: ["s"]))
        let replayed = restored.accept(.act(cancel: ["s"]))
        #expect(original.cancelled == [job(1, 0), job(1, 1)])
        #expect(replayed.cancelled == original.cancelled)
        #expect(replayed.applied == original.applied)
        let after = try JSONEncoder().encode(restored.checkpoint())
        let again = Sequencer(reactor: CancelReactor(), restoring: try JSONDecoder().decode(SequencerCheckpoint<CancelReactor>.self, from: after))
        #expect(again.openJobCount == 0)
        #expect(again.unreportedJobs.isEmpty)
        #expect(again.state.log == ["a:0", "cancelled a", "cancelled b"])
        #expect(again.version == 3)
        sequencer = again
        try expectEverythingLateDropped(job(1, 0), emitIndices: [0, 1])
        try expectEverythingLateDropped(job(1, 1), emitIndices: [0])
    }

    @Test func replayingTheSameEventsCancelsTheSameJobsAtTheSamePoint() throws {
        func run() throws -> (Sequencer<CancelReactor>, [[JobID]]) {
            var sequencer = Sequencer(reactor: CancelReactor())
            var cancelled: [[JobID]] = []
            cancelled.append(sequencer.accept(.act(effects: [.init("q1", id: "s", inFlight: true, lane: "L")])).cancelled)
            _ = try sequencer.apply(job: JobID(actionSeq: 1, effectIndex: 0), emitIndex: 0, mutation: .log("q1:0"))
            cancelled.append(sequencer.accept(.act(effects: [.init("other", lane: "L")])).cancelled)
            _ = try sequencer.apply(job: JobID(actionSeq: 2, effectIndex: 0), emitIndex: 0, mutation: .log("other:0"))
            cancelled.append(sequencer.accept(.act(effects: [.init("q2", id: "s", inFlight: true)])).cancelled)
            _ = try sequencer.apply(job: JobID(actionSeq: 1, effectIndex: 0), emitIndex: 1, mutation: .log("q1:1"))
            return (sequencer, cancelled)
        }
        let (first, firstCancelled) = try run()
        let (second, secondCancelled) = try run()
        #expect(firstCancelled == [[], [], [JobID(actionSeq: 1, effectIndex: 0)]])
        #expect(secondCancelled == firstCancelled)
        #expect(first.state.log == ["q1:0", "cancelled q1", "other:0"])
        #expect(second.state == first.state)
        #expect(second.version == first.version)
        #expect(first.unreportedJobs.map(\.id) == [JobID(actionSeq: 2, effectIndex: 0), JobID(actionSeq: 3, effectIndex: 0)])
        #expect(second.unreportedJobs.map(\.id) == first.unreportedJobs.map(\.id))
        #expect(second.receivedEmits(of: JobID(actionSeq: 2, effectIndex: 0)) == 1)
    }

    @Test func reactorsWithoutCancellationKeepTheirBehaviour() {
        var sequencer = Sequencer(reactor: LogReactor())
        let acceptance = sequencer.accept(.act(sync: ["s"], effects: [.init("e")]))
        #expect(acceptance.cancelled == [])
        #expect(acceptance.finished == [])
        #expect(acceptance.jobs.count == 1)
        #expect(acceptance.version == 1)
        #expect(Mutations<CancelReactor.Mutation, CancelReactor.Effect>(cancel: ["x"]).isEmpty == false)
        #expect(Mutations<CancelReactor.Mutation, CancelReactor.Effect>.none.cancel == [])
    }

    @Test func cancelIDsAreStringsOnTheWire() throws {
        let id: CancelID = "search"
        #expect(String(decoding: try JSONEncoder().encode(id), as: UTF8.self) == "\"search\"")
        #expect(try JSONDecoder().decode(CancelID.self, from: Data("\"x\"".utf8)) == CancelID("x"))
        #expect(id.description == "search")
    }
}
