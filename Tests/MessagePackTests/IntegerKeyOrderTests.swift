import Testing
@testable import MessagePack

/// The radix sort of integer map keys (``IntegerKeyOrder``) against the standard library's sort.
@Suite struct IntegerKeyOrderTests {
    /// Sorts with `IntegerKeyOrder` and checks keys and carried positions against a stable
    /// comparison sort of the same keys.
    func check(_ keys: [Int], sourceLocation: SourceLocation = #_sourceLocation) {
        var sorted = keys
        var positions = Array(keys.indices)
        IntegerKeyOrder.sort(&sorted, carrying: &positions)
        let expected = keys.indices.sorted { keys[$0] < keys[$1] }
        #expect(positions == expected, sourceLocation: sourceLocation)
        #expect(sorted == expected.map { keys[$0] }, sourceLocation: sourceLocation)
    }

    @Test func largeSetsOfKeysSortAsTheComparisonSortDoes() {
        var generator = SystemRandomNumberGenerator()
        // Dense non-negative keys (one pass per differing byte), keys across the whole range with
        // both signs, and small keys around zero with many repeats (stability).
        check((0 ..< 100_000).map { _ in Int.random(in: 0 ..< 1 << 20, using: &generator) })
        check((0 ..< 20_000).map { _ in Int.random(in: .min ... .max, using: &generator) })
        check((0 ..< 5_000).map { _ in Int.random(in: -300 ... 300, using: &generator) })
    }

    @Test func extremesAndRepeatsKeepTheirPlaces() {
        let keys = [Int.max, Int.min, 0, -1, 1, Int.min + 1, Int.max - 1] + Array(repeating: 7, count: 600) + [-7, 256, 255, 65_536]
        var sorted = keys
        var positions = Array(keys.indices)
        IntegerKeyOrder.sort(&sorted, carrying: &positions)
        #expect(sorted.prefix(6) == [Int.min, Int.min + 1, -7, -1, 0, 1])
        #expect(sorted.suffix(5) == [255, 256, 65_536, Int.max - 1, Int.max])
        // The 600 equal keys keep their order: positions 7 ..< 607, ascending.
        #expect(Array(positions[6 ..< 606]) == Array(7 ..< 607))
        check(keys)
    }

    @Test func keysThatShareEveryByteAndShortInputsAreLeftInOrder() {
        check(Array(repeating: 42, count: 1_000))
        check([])
        check([3, 1, 2])
        check(Array((0 ..< IntegerKeyOrder.radixThreshold).reversed()))
    }
}
