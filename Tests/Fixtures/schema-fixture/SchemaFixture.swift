import Foundation
import ReactorNodeKit
import SchemaFixtures

/// Two releases of one node program, for the upgrade tests: `REACTOR_FIXTURE_RELEASE=2` runs
/// release 2 of the "tally" app (schema 2, with its migration), anything else release 1. Every
/// command of reactor-node is available.
@main
struct SchemaFixture {
    static func main() async {
        let release2 = ProcessInfo.processInfo.environment["REACTOR_FIXTURE_RELEASE"] == "2"
        let app = release2
            ? App("tally", reactor: TallyV2(), effects: TallyEffectsV2(), schema: TallyV2.schema)
            : App("tally", reactor: TallyV1(), effects: TallyEffectsV1(), schema: TallyV1.schema)
        await ReactorNodeKit.main(apps: [app], program: "schema-fixture")
    }
}
