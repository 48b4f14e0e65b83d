import Testing
@testable import ReactorBus

/// The authority's count of each client's actions in flight: exact through adds and removes of
/// several clients, while the table grows and shrinks around the client found last.
@Suite struct InFlightCountsTests {
    @Test func countsFollowAddsAndRemovesAndAClientWithNoneLeftIsDropped() {
        var counts = InFlightCounts()
        #expect(counts.isEmpty)
        #expect(counts.count(of: "a") == 0)
        counts.add("a")
        counts.add("a")
        counts.add("b")
        #expect(counts.count(of: "a") == 2)
        #expect(counts.count(of: "b") == 1)
        counts.remove("b")
        #expect(counts.count(of: "b") == 0)
        counts.remove("b")
        #expect(counts.count(of: "b") == 0)
        #expect(counts.count(of: "a") == 2)
        counts.remove("a")
        #expect(counts.count(of: "a") == 1)
        #expect(!counts.isEmpty)
        counts.remove("a")
        #expect(counts.isEmpty)
        counts.add("a")
        #expect(counts.count(of: "a") == 1)
        counts.removeAll()
        #expect(counts.isEmpty)
        #expect(counts.count(of: "a") == 0)
    }

    @Test func theClientFoundLastStaysExactWhileOthersComeAndGo() {
        // Every other client added or dropped changes the table's keys (it grows and moves its
        // entries): the client found last must be looked up again each time.
        var counts = InFlightCounts()
        counts.add("a")
        for index in 1 ... 300 {
            #expect(counts.count(of: "a") == index)
            counts.add("c\(index)")
            counts.add("a")
            if index % 3 == 0 { counts.remove("c\(index - 1)") }
            #expect(counts.count(of: "c\(index)") == 1)
        }
        #expect(counts.count(of: "a") == 301)
        #expect(counts.count(of: "c2") == 0)
        #expect(counts.count(of: "c3") == 1)
        for _ in 1 ... 301 { counts.remove("a") }
        #expect(counts.count(of: "a") == 0)
        #expect(!counts.isEmpty)
    }
}
