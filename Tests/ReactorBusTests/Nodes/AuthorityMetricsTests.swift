import Testing
@testable import ReactorBus

@Suite struct AuthorityMetricsTests {
    @Test func everyCounterHasItsOwnSlotInDeclarationOrder() {
        #expect(AuthorityCounter.allCases.map(\.slot) == Array(AuthorityCounter.allCases.indices))
    }

    @Test func countersAreIndependentAndNamedAsInStats() {
        var metrics = AuthorityMetrics()
        for (offset, counter) in AuthorityCounter.allCases.enumerated() { metrics[counter] = UInt64(offset + 1) }
        for (offset, counter) in AuthorityCounter.allCases.enumerated() {
            #expect(metrics[counter] == UInt64(offset + 1))
            #expect(metrics.dictionary[counter.rawValue] == UInt64(offset + 1))
        }
    }
}
