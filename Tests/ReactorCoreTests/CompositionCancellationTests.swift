import Testing
@testable import ReactorCore

/// Two copies of ``CancelReactor`` side by side: the same cancel ids inside each child must stay
/// that child's, and a parent action that expands into both children's actions cancels in both.
struct TwinReactor: ComposedReactor {
    enum Action: Codable, Sendable {
        case left(CancelReactor.Action)
        case right(CancelReactor.Action)
        /// Expanded by `transform(action:)` into a cancel of `id` in each child.
        case cancelBoth(String)
    }
    enum Mutation: Codable, Sendable, Equatable {
        case left(CancelReactor.Mutation)
        case right(CancelReactor.Mutation)
    }
    enum Effect: Codable, Sendable, Equatable {
        case left(CancelReactor.Effect)
        case right(CancelReactor.Effect)
    }
    struct State: Codable, Sendable, Equatable {
        var left = CancelReactor.State()
        var right = CancelReactor.State()
    }

    static let left = Scope<TwinReactor, CancelReactor>(
        "left", CancelReactor(), state: \.left,
        action: Embedding(Action.left) { if case .left(let action) = $0 { action } else { nil } },
        mutation: Embedding(Mutation.left) { if case .left(let mutation) = $0 { mutation } else { nil } },
        effect: Embedding(Effect.left) { if case .left(let effect) = $0 { effect } else { nil } })
    static let right = Scope<TwinReactor, CancelReactor>(
        "right", CancelReactor(), state: \.right,
        action: Embedding(Action.right) { if case .right(let action) = $0 { action } else { nil } },
        mutation: Embedding(Mutation.right) { if case .right(let mutation) = $0 { mutation } else { nil } },
        effect: Embedding(Effect.right) { if case .right(let effect) = $0 { effect } else { nil } })

    let parts = [Part(TwinReactor.left), Part(TwinReactor.right)]

    var initialState: State { State() }

    func transform(action: Action) -> [Action] {
        if case .cancelBoth(let id) = action { return [.left(.act(cancel: [id])), .right(.act(cancel: [id]))] }
        return transformParts(action: action) ?? [action]
    }
}

@Suite struct CompositionCancellationTests {
    var sequencer = Sequencer(reactor: TwinReactor())

    private func job(_ seq: UInt64, _ index: UInt32 = 0) -> JobID { JobID(actionSeq: seq, effectIndex: index) }

    @Test func aChildsCancelIdsAreNamedAfterItsScope() {
        let twin = TwinReactor()
        #expect(twin.cancelID(for: .left(.init("a", id: "search"))) == "left.search")
        #expect(twin.cancelID(for: .right(.init("a", id: "search"))) == "right.search")
        #expect(twin.cancelID(for: .left(.init("a"))) == nil)
        #expect(twin.cancelsInFlight(.right(.init("a", id: "s", inFlight: true))))
        #expect(!twin.cancelsInFlight(.right(.init("a", id: "s"))))
        #expect(twin.cancelled(effect: .right(.init("a"))) == [.right(.log("cancelled a"))])
        let lifted = TwinReactor.left.lift(Mutations(sync: [.log("x")], cancel: ["search"]))
        #expect(lifted.cancel == ["left.search"])
    }

    @Test mutating func aChildCancelsItsOwnJobsOnly() {
        _ = sequencer.accept(.left(.act(effects: [.init("L1", id: "search")])))
        _ = sequencer.accept(.right(.act(effects: [.init("R1", id: "search")])))
        let cancelling = sequencer.accept(.left(.act(sync: ["stop"], cancel: ["search"])))
        #expect(cancelling.cancelled == [job(1)])
        #expect(cancelling.applied.map(\.mutation) == [.left(.log("stop")), .left(.log("cancelled L1"))])
        #expect(sequencer.state.right.log == [])
        #expect(sequencer.openJobCount == 1)
    }

    @Test mutating func aChildsCancelInFlightReplacesItsOwnJobOnly() {
        _ = sequencer.accept(.left(.act(effects: [.init("L1", id: "search", inFlight: true)])))
        _ = sequencer.accept(.right(.act(effects: [.init("R1", id: "search", inFlight: true)])))
        let replacing = sequencer.accept(.right(.act(effects: [.init("R2", id: "search", inFlight: true)])))
        #expect(replacing.cancelled == [job(2)])
        #expect(replacing.jobs.map(\.id) == [job(3)])
        #expect(sequencer.state == TwinReactor.State(left: .init(), right: .init(log: ["cancelled R1"])))
        #expect(sequencer.openJobCount == 2)
    }

    @Test mutating func anExpandedActionCarriesEveryPartsCancellations() {
        _ = sequencer.accept(.left(.act(effects: [.init("L1", id: "search")])))
        _ = sequencer.accept(.right(.act(effects: [.init("R1", id: "search"), .init("R2", id: "other")])))
        let both = sequencer.accept(.cancelBoth("search"))
        #expect(both.actionSeq == 3)
        #expect(both.cancelled == [job(1), job(2, 0)])
        #expect(both.applied.map(\.mutation) == [.left(.log("cancelled L1")), .right(.log("cancelled R1"))])
        #expect(sequencer.openJobCount == 1)
    }
}
