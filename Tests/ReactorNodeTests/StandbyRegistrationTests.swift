import Foundation
@testable import ReactorNodeKit
import Testing

/// Which elected standby takes over first: the one whose journal reaches furthest, by LSN.
@Suite struct StandbyRegistrationTests {
    func registration(version: UInt64, lsn: UInt64?) -> StandbyRegistration {
        StandbyRegistration(version: version, lsn: lsn, endpoints: ["actions": "tcp://127.0.0.1:7001"])
    }

    @Test func aLongerJournalAtTheSameVersionGoesFirstWhateverTheNames() {
        let short = registration(version: 50, lsn: 50)
        let long = registration(version: 50, lsn: 250)
        #expect(long.precedes(short, name: "c", other: "b"))
        #expect(!short.precedes(long, name: "b", other: "c"))
    }

    @Test func theLSNDecidesEvenWhereTheVersionsSayOtherwise() {
        // Versions follow LSNs on one primary's journal; the LSN is what a new primary checks.
        let fewerRecords = registration(version: 60, lsn: 70)
        let moreRecords = registration(version: 59, lsn: 71)
        #expect(moreRecords.precedes(fewerRecords, name: "b", other: "a"))
        #expect(!fewerRecords.precedes(moreRecords, name: "a", other: "b"))
    }

    @Test func equalJournalsGoToTheSmallerName() {
        let one = registration(version: 50, lsn: 250)
        #expect(one.precedes(one, name: "b", other: "c"))
        #expect(!one.precedes(one, name: "c", other: "b"))
        #expect(!one.precedes(one, name: "b", other: "b"))
    }

    @Test func aRegistrationWithoutAnLSNIsComparedByVersion() {
        let older = registration(version: 50, lsn: nil)
        let newer = registration(version: 49, lsn: 300)
        #expect(older.precedes(newer, name: "c", other: "b"))
        #expect(!newer.precedes(older, name: "b", other: "c"))
        #expect(registration(version: 50, lsn: 1).precedes(older, name: "b", other: "c"))
    }

    @Test func theLSNTravelsInTheJSONAndAnOlderRegistrationReadsWithoutOne() throws {
        let written = registration(version: 7, lsn: 9)
        let json = try #require(String(data: try JSONEncoder().encode(written), encoding: .utf8))
        #expect(json.contains(#""lsn":9"#))
        #expect(try JSONDecoder().decode(StandbyRegistration.self, from: Data(json.utf8)) == written)
        let older = try JSONDecoder().decode(StandbyRegistration.self, from: Data(#"{"version":7}"#.utf8))
        #expect(older == StandbyRegistration(version: 7, lsn: nil, endpoints: nil))
    }
}
