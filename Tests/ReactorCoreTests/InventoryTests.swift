import ReactorApps
import Testing
import ReactorCore

@Suite struct InventoryTests {
    @Test func theInitialStateHoldsEveryItemWithItsName() {
        let state = Inventory(itemCount: 3).initialState
        #expect(state.adjustments == 0)
        #expect(state.items == [
            .init(id: 0, name: "item-00000", quantity: 100),
            .init(id: 1, name: "item-00001", quantity: 100),
            .init(id: 2, name: "item-00002", quantity: 100),
        ])
        #expect(Inventory().initialState.items.count == 10_000)
    }

    @Test func eachActionTouchesOneItemAndIsCounted() {
        var sequencer = Sequencer(reactor: Inventory(itemCount: 4))
        let first = sequencer.accept(.adjust(item: 2, by: -5))
        #expect(first.applied.count == 1)
        #expect(first.jobs.isEmpty)
        _ = sequencer.accept(.adjust(item: 2, by: 1))
        _ = sequencer.accept(.adjust(item: 0, by: 7))
        #expect(sequencer.state.items.map(\.quantity) == [107, 100, 96, 100])
        #expect(sequencer.state.adjustments == 3)
        #expect(sequencer.version == 3)
    }

    @Test func anUnknownItemIsCountedAndChangesNoItem() {
        var sequencer = Sequencer(reactor: Inventory(itemCount: 2))
        _ = sequencer.accept(.adjust(item: 5, by: 1))
        _ = sequencer.accept(.adjust(item: -1, by: 1))
        #expect(sequencer.state.items.map(\.quantity) == [100, 100])
        #expect(sequencer.state.adjustments == 2)
    }
}
