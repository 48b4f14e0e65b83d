import ReactorApps
import ReactorCore
import ReactorTesting
import Testing

/// The inventory app: one item per action, every adjustment counted.
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
        let store = TestStore(reactor: Inventory(itemCount: 4))
        store.send(.adjust(item: 2, by: -5)) {
            $0.items[2].quantity = 95
            $0.adjustments = 1
        }
        store.send(.adjust(item: 2, by: 1)) {
            $0.items[2].quantity = 96
            $0.adjustments = 2
        }
        store.send(.adjust(item: 0, by: 7)) {
            $0.items[0].quantity = 107
            $0.adjustments = 3
        }
        store.finish()
        #expect(store.state.items.map(\.quantity) == [107, 100, 96, 100])
        #expect(store.version == 3)
        #expect(store.pendingEffects.isEmpty)
    }

    @Test func anUnknownItemIsCountedAndChangesNoItem() {
        let store = TestStore(reactor: Inventory(itemCount: 2))
        store.send(.adjust(item: 5, by: 1)) { $0.adjustments = 1 }
        store.send(.adjust(item: -1, by: 1)) { $0.adjustments = 2 }
        store.finish()
        #expect(store.state.items.map(\.quantity) == [100, 100])
    }

    @Test func aWrongItemInTheFullInventoryShowsOnlyTheChangedLines() async {
        let store = TestStore(reactor: Inventory())
        let issues = await recordedIssues {
            store.send(.adjust(item: 4_321, by: 2)) {
                $0.items[4_321].quantity = 101
                $0.adjustments = 1
            }
        }
        #expect(issues == [
            "State after sending adjust(item: 4321, by: 2) differs from the expectation (− expected, + actual):\n"
                + "  …\n"
                + "        - id: 4321\n"
                + "        - name: \"item-04321\"\n"
                + "−       - quantity: 101\n"
                + "+       - quantity: 102\n"
                + "      ▿ ReactorApps.Inventory.Item\n"
                + "        - id: 4322\n"
                + "  …",
        ])
    }
}
