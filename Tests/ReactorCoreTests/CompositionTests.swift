import ReactorApps
import Testing
@testable import ReactorCore

/// SwiftReactor's nesting example: `AppReactor` holds `DetailReactor`'s state and reacts to its
/// changes (there by merging `detailReactor.$state` into its mutations with `setDetail`; here in
/// `reduce`, at the same version as the child's mutation).
struct DetailReactor: Reactor {
    enum Action: Codable, Sendable, Equatable { case ageChanged(Int) }
    enum Mutation: Codable, Sendable, Equatable { case setAge(Int) }
    enum Effect: Codable, Sendable, Equatable { case none }
    struct State: Codable, Sendable, Equatable { var age = 0 }

    var initialState: State { State() }

    func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .ageChanged(let age): [.setAge(age)]
        }
    }

    func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .setAge(let age): state.age = age
        }
    }
}

struct AppReactor: ComposedReactor {
    enum Action: Codable, Sendable, Equatable {
        case nameChanged(String)
        case detail(DetailReactor.Action)
    }
    enum Mutation: Codable, Sendable, Equatable {
        case setName(String)
        case detail(DetailReactor.Mutation)
    }
    enum Effect: Codable, Sendable, Equatable { case detail(DetailReactor.Effect) }
    struct State: Codable, Sendable, Equatable {
        var name = ""
        var detail = DetailReactor.State()
        /// The parent's copy of what it shows, kept in step with the child.
        var headline = ""
    }

    static let detailScope = Scope<AppReactor, DetailReactor>(
        "detail", DetailReactor(), state: \.detail,
        action: Embedding(Action.detail) { if case .detail(let action) = $0 { action } else { nil } },
        mutation: Embedding(Mutation.detail) { if case .detail(let mutation) = $0 { mutation } else { nil } },
        effect: Embedding(Effect.detail) { if case .detail(let effect) = $0 { effect } else { nil } })

    let parts = [Part(AppReactor.detailScope)]

    var initialState: State { State() }

    func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        if let mutations = mutateParts(state: state, action: action) { return mutations }
        if case .nameChanged(let name) = action { return [.setName(name)] }
        return .none
    }

    func reduce(state: inout State, mutation: Mutation) {
        if case .setName(let name) = mutation { state.name = name }
        _ = reduceParts(state: &state, mutation: mutation)
        state.headline = "\(state.name), \(state.detail.age)"
    }
}

struct NoDetailEffects: EffectHandler {
    func run(_ effect: AppReactor.Effect, emit: Emitter<AppReactor.Mutation>) async throws {}
}

@Suite struct CompositionTests {
    // MARK: The seeds' nesting example

    @Test func theParentHoldsTheChildStateAndReactsToItsMutations() async {
        let store = Store(reactor: AppReactor(), effects: NoDetailEffects())
        await store.send(.nameChanged("Ada"))
        let receipt = await store.send(.detail(.ageChanged(36)))
        #expect(receipt.state == AppReactor.State(name: "Ada", detail: .init(age: 36), headline: "Ada, 36"))
        #expect(receipt.version == 2)
        #expect(await store.version == 2)
    }

    @Test func theChildsFunctionsAreReusedUnchanged() {
        let scope = AppReactor.detailScope
        var state = AppReactor.State()
        let mutations = scope.mutate(state: state, action: .detail(.ageChanged(3)))
        #expect(mutations == [.detail(.setAge(3))])
        #expect(scope.mutate(state: state, action: .nameChanged("x")) == nil)
        #expect(scope.reduce(state: &state, mutation: .detail(.setAge(3))))
        #expect(state.detail.age == 3)
        #expect(!scope.reduce(state: &state, mutation: .setName("x")))
        #expect(state.name == "")
    }

    // MARK: The shop: two children, kinds, lanes, projections, transforms

    @Test func childKindsAndLanesAreNamedAfterTheirScope() {
        let shop = Shop()
        #expect(shop.kind(of: .cart(.charge(total: 3))) == "cart.charge")
        #expect(shop.kind(of: .detail(.fetch(item: "tea"))) == "detail.fetch")
        #expect(shop.lane(for: .cart(.charge(total: 3))) == "cart.payments")
        #expect(shop.lane(for: .detail(.fetch(item: "tea"))) == nil)
    }

    @Test func projectionsAreEachChildsPartItsOwnAndTheParents() {
        #expect(Shop().projections.map(\.name) == ["cart", "cart.count", "detail", "summary"])
    }

    @Test func aChildsLanesStayOrderedInsideTheParent() throws {
        var sequencer = Sequencer(reactor: Shop())
        _ = sequencer.start()
        let first = sequencer.accept(.buy(item: "tea", price: 3))
        let second = sequencer.accept(.buy(item: "jam", price: 5))
        #expect(first.jobs.map(\.lane) == ["cart.payments"])
        #expect(first.jobs.map(\.kind) == ["cart.charge"])
        let (a, b) = (first.jobs[0].id, second.jobs[0].id)
        // The later payment finishes first: held until the earlier one ends.
        #expect(try sequencer.apply(job: b, emitIndex: 0, mutation: .cart(.paid(total: 5))).disposition == .buffered)
        #expect(try sequencer.complete(job: b, emitCount: 1).disposition == .buffered)
        #expect(sequencer.state.cart.paid == [])
        _ = try sequencer.apply(job: a, emitIndex: 0, mutation: .cart(.paid(total: 3)))
        let progress = try sequencer.complete(job: a, emitCount: 1)
        #expect(progress.finished == [a, b])
        #expect(sequencer.state.cart.paid == [3, 5])
    }

    @Test func anotherChildsJobIsNotHeldByTheCartsLane() throws {
        var sequencer = Sequencer(reactor: Shop())
        let started = sequencer.start()
        let start = try #require(started)
        let fetch = start.jobs[0].id
        _ = sequencer.accept(.buy(item: "tea", price: 3))
        let progress = try sequencer.apply(job: fetch, emitIndex: 0, mutation: .detail(.loaded(item: "welcome", description: "about welcome")))
        #expect(progress.disposition == .applied)
        #expect(sequencer.state.detail.description == "about welcome")
    }

    @Test func aFreshShopAppliesItsInitialValuesAndBuyExpands() async {
        let store = Store(reactor: Shop(), effects: ComposedEffects(Shop.effects()))
        await store.waitUntilIdle()
        var state = await store.state
        #expect(state.isOpen)
        #expect(state.views == 1)
        #expect(state.detail == ShopDetail.State(item: "welcome", description: "about welcome", loads: 1))
        let receipt = await store.send(.buy(item: "tea", price: 3))
        #expect(receipt.actionSeq == 2)
        #expect(receipt.jobs == [JobID(actionSeq: 2, effectIndex: 0)])
        await store.waitUntilIdle()
        state = await store.state
        #expect(state.cart == ShopCart.State(items: [:], paid: [3], checkouts: 1))
        #expect(state.summary == "empty")
        await store.send(.cart(.add(item: "jam", price: 5)))
        #expect(await store.state.summary == "1 item(s): jam")
        // Versions: opened, shown, loaded; added, checked out, paid; added.
        #expect(await store.version == 7)
    }

    @Test func aChildsProjectionYieldsOnlyWhenThatChildChanges() async {
        let store = Store(reactor: Shop(), effects: ComposedEffects(Shop.effects()))
        await store.waitUntilIdle()
        let stream = await store.updates(of: Shop.cart.projection)
        var iterator = stream.makeAsyncIterator()
        await store.send(.detail(.show(item: "tea")))
        await store.waitUntilIdle()
        await store.send(.cart(.add(item: "tea", price: 3)))
        await store.send(.detail(.show(item: "jam")))
        await store.waitUntilIdle()
        await store.send(.cart(.remove(item: "tea")))
        var seen: [Snapshot<ShopCart.State>] = []
        for _ in 0..<3 {
            if let next = await iterator.next() { seen.append(next) }
        }
        #expect(seen.map(\.version) == [3, 6, 9])
        #expect(seen.map(\.state.items) == [[:], ["tea": 3], [:]])
        await store.shutdown()
    }

    // MARK: Effect handlers of parts

    @Test func aPartsHandlerRunsItsEffectsOnlyAndLiftsWhatTheyEmit() async throws {
        let handler = try #require(ComposedEffects(Shop.effects()).only("cart"))
        let emitted = EmitLog()
        try await handler.run(.cart(.charge(total: 4)), emit: Emitter { index, mutation in await emitted.append(index, mutation) })
        #expect(await emitted.entries == [EmitLog.Entry(index: 0, mutation: .cart(.paid(total: 4)))])
        await #expect(throws: UnhandledEffect.self) {
            try await handler.run(.detail(.fetch(item: "tea")), emit: Emitter { _, _ in })
        }
        #expect(ComposedEffects(Shop.effects()).only("nope") == nil)
    }

    @Test func kindPatternsServeOnePart() {
        #expect(EffectKind.serves(["cart.*"], kind: "cart.charge"))
        #expect(!EffectKind.serves(["cart.*"], kind: "detail.fetch"))
        #expect(!EffectKind.serves(["cart.*"], kind: "cartoon"))
        #expect(EffectKind.serves([String](), kind: "anything"))
        #expect(EffectKind.serves(["detail.fetch"], kind: "detail.fetch"))
    }
}

actor EmitLog {
    struct Entry: Equatable {
        var index: UInt32
        var mutation: Shop.Mutation
    }

    private(set) var entries: [Entry] = []

    func append(_ index: UInt32, _ mutation: Shop.Mutation) { entries.append(Entry(index: index, mutation: mutation)) }
}
