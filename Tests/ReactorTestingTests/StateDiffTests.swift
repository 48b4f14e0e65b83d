import ReactorTesting
import Testing

@Suite struct StateDiffTests {
    struct Sample: Equatable {
        var name: String
        var values: [Int]
    }

    @Test func equalValuesHaveNoDiff() {
        #expect(StateDiff.lines(expected: Sample(name: "a", values: [1]), actual: Sample(name: "a", values: [1])) == nil)
    }

    @Test func changedInsertedAndRemovedLinesAreMarkedWithContext() {
        let diff = StateDiff.lines(expected: Sample(name: "a", values: [1, 2, 3, 4, 5, 6, 7, 8]),
                                   actual: Sample(name: "a", values: [1, 2, 3, 4, 5, 6, 7, 9, 10]))
        #expect(diff == """
              ▿ ReactorTestingTests.StateDiffTests.Sample
                - name: "a"
            −   ▿ values: 8 elements
            +   ▿ values: 9 elements
                  - 1
                  - 2
              …
                  - 6
                  - 7
            −     - 8
            +     - 9
            +     - 10
            """)
    }

    @Test func longUnchangedRunsBetweenChangesAreElided() {
        let expected = Array(0..<20)
        var actual = expected
        actual[1] = 100
        actual[18] = 200
        let diff = StateDiff.lines(expected: expected, actual: actual)
        #expect(diff == """
              ▿ 20 elements
                - 0
            −   - 1
            +   - 100
                - 2
                - 3
              …
                - 16
                - 17
            −   - 18
            +   - 200
                - 19
            """)
    }

    @Test func aLargeStateDiffsFastAndShowsOnlyTheChange() {
        let expected = Array(0..<50_000)
        var actual = expected
        actual[25_000] = -1
        let diff = StateDiff.lines(expected: expected, actual: actual)
        #expect(diff == "  …\n    - 24998\n    - 24999\n−   - 25000\n+   - -1\n    - 25001\n    - 25002\n  …")
    }
}
