import Synchronization
import Testing
@testable import ReactorCore

/// The sequencer asks the reactor for the kind of each distinct plain effect value once, and
/// still gives every job the kind of its own effect.
@Suite struct EffectKindMemoTests {
    /// Counts how often the sequencer asks for a kind.
    final class Asked: Sendable {
        let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
    }

    /// A reactor whose actions list the effects to run; its kind names the whole value, so a kind
    /// remembered for the wrong value shows.
    struct Kinds<Effect: Codable & Sendable>: Reactor {
        enum Action: Codable, Sendable { case run([Effect]) }
        enum Mutation: Codable, Sendable { case none }
        struct State: Codable, Sendable {}

        let asked: Asked
        var initialState: State { State() }

        func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
            switch action {
            case .run(let effects): Mutations(sync: [], async: effects)
            }
        }

        func reduce(state: inout State, mutation: Mutation) {}

        func kind(of effect: Effect) -> String {
            asked.count.withLock { $0 += 1 }
            return "\(effect)"
        }
    }

    /// Trivially copyable: its bytes are the whole value.
    enum Plain: Codable, Sendable { case ping, fetch(id: Int) }
    /// Holds a reference: equal bytes would not mean equal values.
    enum Named: Codable, Sendable { case named(String) }

    @Test func aPlainEffectIsAskedOncePerDistinctValue() {
        let asked = Asked()
        var sequencer = Sequencer(reactor: Kinds<Plain>(asked: asked))
        var kinds: [String] = []
        for _ in 0 ..< 5 {
            kinds += sequencer.accept(.run([.ping, .fetch(id: 1), .fetch(id: 2)])).jobs.map(\.kind)
        }
        #expect(kinds == Array(repeating: ["ping", "fetch(id: 1)", "fetch(id: 2)"], count: 5).flatMap { $0 })
        #expect(asked.value == 3)
    }

    @Test func anEffectHoldingAReferenceIsAskedEveryTime() {
        let asked = Asked()
        var sequencer = Sequencer(reactor: Kinds<Named>(asked: asked))
        var kinds: [String] = []
        for index in 0 ..< 4 {
            // Strings long enough to live on the heap: equal bytes would not mean equal values.
            let name = String(repeating: "x", count: 20) + "\(index % 2)"
            kinds += sequencer.accept(.run([.named(name)])).jobs.map(\.kind)
        }
        let x = String(repeating: "x", count: 20)
        #expect(kinds == ["named(\"\(x)0\")", "named(\"\(x)1\")", "named(\"\(x)0\")", "named(\"\(x)1\")"])
        #expect(asked.value == 4)
    }

    @Test func pastTheLimitValuesAreAskedAgainAndEveryKindIsRight() {
        let asked = Asked()
        var sequencer = Sequencer(reactor: Kinds<Plain>(asked: asked))
        let limit = EffectKindMemo.limit
        let ids = Array(0 ..< limit + 40)
        for _ in 0 ..< 2 {
            let kinds = ids.flatMap { sequencer.accept(.run([.fetch(id: $0)])).jobs.map(\.kind) }
            #expect(kinds == ids.map { "fetch(id: \($0))" })
        }
        // Every value once, then again only the 40 that did not fit.
        #expect(asked.value == limit + 40 + 40)
    }
}
